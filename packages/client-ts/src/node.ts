/**
 * `@sysprompt/client/node`: host-local values read on the host, with Node's `fs` only
 * (nothing is started, nothing a repository names is run).
 *
 * {@link localValues} resolves the `prompt:cwd`, `file:`, `system:` and `git:` references
 * the server asks for, byte for byte as the Python client resolves them (the Python
 * core's resolvers), confined to the allowed roots (default: the working directory) on
 * what was actually opened, and bounded. {@link Sysprompt} here is the core client with
 * these values on by default, as the Python client has them: before a build it asks the
 * server which references its template reaches and which host-local types the server
 * leaves to the host, and sends those.
 */

import * as fs from "node:fs";

import { Sysprompt as CoreSysprompt, type HostValues, type SyspromptOptions } from "./client.js";
import { readFileValue } from "./node/file.js";
import { readGit } from "./node/git/index.js";
import { abspath, bytes, realpath, realRoots, text } from "./node/paths.js";
import { DEFAULT_LIMITS, Missing, type Limits, type Resolution, type Value } from "./node/values.js";
import { isHostLocal } from "./references.js";

export * from "./index.js";
export { DEFAULT_LIMITS, Missing, type Limits };

export interface LocalOptions {
  /** The conversation's working directory. */
  cwd: string;
  /** Where `file:` and `git:` may read (default: the working directory alone). */
  roots?: readonly string[] | null;
  /** Bounds (default: the Python core's). */
  limits?: Partial<Limits>;
}

const SYSTEM = new Set(["time", "date", "os", "hostname"]);

function hostname(): Value {
  try {
    return fs.readFileSync("/proc/sys/kernel/hostname", "utf8").replace(/\n$/, "");
  } catch {
    return new Missing("the host name cannot be read here (no /proc/sys/kernel/hostname)");
  }
}

function systemValue(name: string, now: Date): Value {
  switch (name) {
    case "time":
      return now.toISOString();
    case "date":
      return now.toISOString().slice(0, 10);
    case "os":
      return process.platform;
    case "hostname":
      return hostname();
    default:
      return new Missing("unknown variable");
  }
}

function resolution(options: LocalOptions): Resolution {
  const cwd = options.cwd;
  const roots = options.roots ?? [cwd];
  return {
    cwd,
    directory: cwd ? realpath(abspath(bytes(cwd))) : "",
    roots: realRoots(roots),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    now: new Date(),
    used: 0,
    files: new Map(),
  };
}

/** Each host-local reference's value, or {@link Missing} with why it does not exist. */
export async function explainLocalValues(
  references: Iterable<string>,
  options: LocalOptions,
): Promise<Map<string, Value>> {
  const keys = [...new Set(references)].filter(isHostLocal);
  const values = new Map<string, Value>();
  if (keys.length === 0) return values;
  const context = resolution(options);
  const gitNames = keys.filter((key) => key.startsWith("git:")).map((key) => key.slice(4));
  let git: Map<string, Value> | null = null;
  for (const key of keys) {
    const colon = key.indexOf(":");
    const kind = key.slice(0, colon);
    const name = key.slice(colon + 1);
    let value: Value;
    try {
      if (kind === "prompt") {
        value = context.cwd ? text(abspath(bytes(context.cwd))) : new Missing("no working directory was given");
      } else if (kind === "system") {
        value = SYSTEM.has(name) ? systemValue(name, context.now) : new Missing("unknown variable");
      } else if (kind === "file") {
        value =
          !context.directory && !name.startsWith("/")
            ? new Missing("a relative path needs a working directory")
            : readFileValue(name, context);
      } else {
        if (!context.directory) value = new Missing("no working directory was given");
        else {
          git ??= await readGit(gitNames, context);
          value = git.get(name) ?? new Missing("the resolver gave no value");
        }
      }
    } catch (error) {
      value = new Missing(`the ${kind} resolver failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    values.set(key, value);
  }
  return values;
}

/** The values of the host-local `references` as the client sends them: `"type:name"` →
 * text, or `null` when it does not exist. Keys that are not host-local are left out. */
export async function localValues(
  references: Iterable<string>,
  options: LocalOptions,
): Promise<Record<string, string | null>> {
  const values: Record<string, string | null> = {};
  for (const [key, value] of await explainLocalValues(references, options)) {
    values[key] = value instanceof Missing ? null : value;
  }
  return values;
}

/** A {@link HostValues} resolver for the client, reading inside `roots` (default: each
 * conversation's working directory). */
export function nodeHostValues(options: { roots?: readonly string[] | null; limits?: Partial<Limits> } = {}): HostValues {
  return (keys, context) =>
    localValues(keys, { cwd: context.cwd, roots: options.roots ?? null, ...(options.limits ? { limits: options.limits } : {}) });
}

export interface NodeSyspromptOptions extends SyspromptOptions {
  /** Where host-local resolution may read (default: the conversation's working directory). */
  allowedRoots?: readonly string[] | null;
  /** Bounds of host-local resolution (default: the Python core's). */
  limits?: Partial<Limits>;
}

/** The client with host-local values read on this host by default (see the module). */
export class Sysprompt extends CoreSysprompt {
  constructor(options: NodeSyspromptOptions) {
    super({
      ...options,
      hostValues:
        options.hostValues === undefined
          ? nodeHostValues({ roots: options.allowedRoots ?? null, ...(options.limits ? { limits: options.limits } : {}) })
          : options.hostValues,
    });
  }
}
