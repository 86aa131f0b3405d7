/**
 * `file:<path>`: the text of a file near the conversation, as the Python core reads it.
 *
 * The path is relative to the working directory's real path, or absolute. Its real path
 * must lie inside the working directory or an allowed root (a cheap check on the name
 * first, so nothing outside is even opened); then the file is opened without following
 * a final symlink and without blocking, and what counts is the **opened** file
 * ({@link openedInside}). It must be a regular file within `maxFileBytes` and the read
 * budget of the resolution, UTF-8 without NUL; a leading byte order mark is dropped
 * and one trailing line ending removed. A file reached by several names is read once.
 */

import * as fs from "node:fs";

import { B, describeError, insideAny, join, O_NOFOLLOW, O_READ, openedInside, readAtMost, realpath } from "./paths.js";
import { Missing, type Resolution, type Value } from "./values.js";

const OUTSIDE = new Missing("outside the allowed roots");
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The value of `file:<name>` (name as text); never throws. */
export function readFileValue(name: string, resolution: Resolution): Value {
  if (!name || name.includes("\0")) return new Missing("not a valid path");
  const cwd = resolution.directory;
  const roots = cwd ? [cwd, ...resolution.roots] : [...resolution.roots];
  let real: string;
  try {
    real = realpath(join(cwd, Buffer.from(name, "utf8").toString("latin1")));
  } catch {
    return new Missing("not a valid path");
  }
  if (!insideAny(real, roots)) return OUTSIDE;
  let fd: number;
  try {
    fd = fs.openSync(B(real), O_READ | O_NOFOLLOW);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return new Missing("no such file");
    return new Missing(`cannot be opened: ${describeError(error)}`);
  }
  try {
    if (!openedInside(fd, real, roots)) return OUTSIDE;
    return readOpen(fd, resolution);
  } catch (error) {
    return new Missing(`cannot be read: ${describeError(error)}`);
  } finally {
    fs.closeSync(fd);
  }
}

function readOpen(fd: number, resolution: Resolution): Value {
  const info = fs.fstatSync(fd, { bigint: true });
  if (!info.isFile()) return new Missing("not a regular file");
  const limit = resolution.limits.maxFileBytes;
  const tooLarge = new Missing(`larger than ${limit} bytes`);
  const size = Number(info.size);
  if (size > limit) return tooLarge;
  const key = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
  const known = resolution.files.get(key);
  if (known !== undefined) return known;
  const budget = resolution.limits.maxReadBytes;
  const remaining = Math.max(budget - resolution.used, 0);
  const overBudget = new Missing(
    `over the read budget: one resolution reads at most ${budget.toLocaleString("en-US")} bytes ` +
      `(${resolution.used.toLocaleString("en-US")} already read; SYSPROMPT_MAX_READ_BYTES)`,
  );
  if (size > remaining) return overBudget;
  const data = readAtMost(fd, Math.min(limit, remaining) + 1);
  resolution.used += data.length;
  let value: Value;
  if (data.length > limit) value = tooLarge;
  else if (data.length > remaining) return overBudget;
  else value = decode(data);
  resolution.files.set(key, value);
  return value;
}

function decode(data: Uint8Array): Value {
  if (data.includes(0)) return new Missing("binary: contains NUL bytes");
  let text: string;
  try {
    text = decoder.decode(data);
  } catch {
    return new Missing("not UTF-8");
  }
  // TextDecoder drops a leading BOM itself (ignoreBOM is false), as removeprefix does.
  if (text.endsWith("\r\n")) return text.slice(0, -2);
  if (text.endsWith("\n")) return text.slice(0, -1);
  return text;
}
