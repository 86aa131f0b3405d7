/**
 * Paths as the Python client sees them, and confinement checked on what was opened.
 *
 * Paths here are **byte strings**: each character one byte of the path (latin1), so a
 * file name that is not UTF-8 survives, comparisons are bytewise (git sorts bytes), and
 * `fs` gets the exact bytes (`Buffer.from(path, "latin1")`). {@link bytes} and {@link
 * text} convert from and to ordinary strings.
 *
 * {@link realpath} is Python's `os.path.realpath` (not strict: a missing part is kept as
 * it is), {@link isInside} the core's `is_inside`. {@link openInside} opens a file and
 * checks the path of the **opened descriptor**, as the kernel reports it
 * (`/proc/self/fd/N`), against the roots; where there is no `/proc` it checks that the
 * opened file is the very file (device and inode) the real path names inside the roots.
 */

import * as fs from "node:fs";

/** A path's UTF-8 bytes as a byte string. */
export function bytes(path: string): string {
  return Buffer.from(path, "utf8").toString("latin1");
}

/** A byte string back to a string (bytes that are not UTF-8 become U+FFFD). */
export function text(path: string): string {
  return Buffer.from(path, "latin1").toString("utf8");
}

/** The `fs` argument for a byte-string path. */
export function B(path: string): Buffer {
  return Buffer.from(path, "latin1");
}

export function join(...parts: string[]): string {
  let path = "";
  for (const part of parts) {
    if (part.startsWith("/")) path = part;
    else if (!path || path.endsWith("/")) path += part;
    else path += `/${part}`;
  }
  return path;
}

export function dirname(path: string): string {
  const i = path.lastIndexOf("/") + 1;
  let head = path.slice(0, i);
  if (head && head !== "/".repeat(head.length)) head = head.replace(/\/+$/, "");
  return head;
}

function split(path: string): [string, string] {
  const i = path.lastIndexOf("/") + 1;
  let head = path.slice(0, i);
  if (head && head !== "/".repeat(head.length)) head = head.replace(/\/+$/, "");
  return [head, path.slice(i)];
}

export function normpath(path: string): string {
  // posix.normalize differs from Python's normpath on "//" and trailing slashes.
  if (path === "") return ".";
  const initial = path.startsWith("/") ? (path.startsWith("//") && !path.startsWith("///") ? 2 : 1) : 0;
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== ".." || (!initial && parts.length === 0) || parts[parts.length - 1] === "..") parts.push(part);
    else if (parts.length > 0) parts.pop();
  }
  return "/".repeat(initial) + parts.join("/") || ".";
}

/** Python's `os.path.abspath` (of a byte string). */
export function abspath(path: string): string {
  return normpath(path.startsWith("/") ? path : join(bytes(process.cwd()), path));
}

function lstat(path: string): fs.Stats | null {
  try {
    return fs.lstatSync(B(path));
  } catch {
    return null;
  }
}

function joinReal(start: string, rest: string, seen: Map<string, string | null>): [string, boolean] {
  let path = start;
  if (rest.startsWith("/")) {
    rest = rest.slice(1);
    path = "/";
  }
  while (rest) {
    const slash = rest.indexOf("/");
    const name = slash < 0 ? rest : rest.slice(0, slash);
    rest = slash < 0 ? "" : rest.slice(slash + 1);
    if (!name || name === ".") continue;
    if (name === "..") {
      if (path) {
        const [head, tail] = split(path);
        path = tail === ".." ? join(head, "..", "..") : head;
      } else {
        path = "..";
      }
      continue;
    }
    const next = join(path, name);
    const info = lstat(next);
    if (info === null || !info.isSymbolicLink()) {
      path = next;
      continue;
    }
    if (seen.has(next)) {
      const known = seen.get(next) ?? null;
      if (known !== null) {
        path = known;
        continue;
      }
      return [join(next, rest), false];
    }
    seen.set(next, null);
    const target = fs.readlinkSync(B(next), { encoding: "buffer" }).toString("latin1");
    const [resolved, ok] = joinReal(path, target, seen);
    if (!ok) return [join(resolved, rest), false];
    path = resolved;
    seen.set(next, resolved);
  }
  return [path, true];
}

/** Python's `os.path.realpath` (not strict) of a byte string. */
export function realpath(path: string): string {
  return abspath(joinReal("", path, new Map())[0]);
}

/** Whether `path` is `root` or below it (`/home/a` does not hold `/home/ab`). */
export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root.replace(/\/+$/, "")}/`);
}

export function insideAny(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => isInside(path, root));
}

/** Python's `os.path.expanduser` for `~` and `~/…` (byte strings). */
export function expanduser(path: string): string {
  if (path !== "~" && !path.startsWith("~/")) return path;
  const home = process.env["HOME"];
  if (!home) return path;
  return (bytes(home).replace(/\/+$/, "") || "/") + path.slice(1);
}

/** The absolute ones of `roots`, `~` expanded and symlinks resolved (the core's `real_roots`). */
export function realRoots(roots: readonly string[]): string[] {
  return roots
    .filter((root) => root)
    .map((root) => expanduser(bytes(root)))
    .filter((root) => root.startsWith("/"))
    .map(realpath);
}

const PROC_FD = "/proc/self/fd";
const hasProc = ((): boolean => {
  try {
    return fs.statSync(PROC_FD).isDirectory();
  } catch {
    return false;
  }
})();

/** The path of what `fd` is open on, as the kernel knows it (`/proc/self/fd`), or `null`
 * where there is no `/proc`. */
export function descriptorPath(fd: number): string | null {
  if (!hasProc) return null;
  return fs.readlinkSync(`${PROC_FD}/${fd}`, { encoding: "buffer" }).toString("latin1");
}

export const O_READ = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);
export const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/** Whether the open `fd` lies inside `roots`: its descriptor path, or else (no `/proc`)
 * the file the real path of `path` names now, when it is the same file. */
export function openedInside(fd: number, path: string, roots: readonly string[]): boolean {
  const opened = descriptorPath(fd);
  if (opened !== null) return insideAny(opened, roots);
  const real = realpath(path);
  if (!insideAny(real, roots)) return false;
  const info = fs.fstatSync(fd);
  const named = lstat(real);
  return named !== null && named.dev === info.dev && named.ino === info.ino;
}

/** Reads at most `limit` bytes from the open `fd`. */
export function readAtMost(fd: number, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const chunk = Buffer.allocUnsafe(Math.min(limit - total, 1 << 20));
    const count = fs.readSync(fd, chunk, 0, chunk.length, null);
    if (count === 0) break;
    chunks.push(count === chunk.length ? chunk : chunk.subarray(0, count));
    total += count;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** A lowercase description of a file-system error, without the path (like the core's
 * `describe_error`: the C library's message for the errno). */
export function describeError(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  return (code && STRERROR[code]) || (code ? code.toLowerCase() : String(error));
}

const STRERROR: Record<string, string> = {
  EACCES: "permission denied",
  ELOOP: "too many levels of symbolic links",
  ENOTDIR: "not a directory",
  ENAMETOOLONG: "file name too long",
  ENXIO: "no such device or address",
  EISDIR: "is a directory",
  EPERM: "operation not permitted",
  EIO: "input/output error",
  EMFILE: "too many open files",
  EAGAIN: "resource temporarily unavailable",
  ENOENT: "no such file or directory",
};
