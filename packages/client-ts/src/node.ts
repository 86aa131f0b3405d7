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
 * leaves to the host, and sends those. Everything the core entry exports is exported
 * here too.
 */

import * as fs from "node:fs";

import { conversationPath, Sysprompt as CoreSysprompt, type Call, type SyspromptOptions, type TurnOptions } from "./client.js";
import { InvalidRequest, NotFound, ServerError } from "./errors.js";
import { promptFromJson, type PromptResult } from "./result.js";
import { readFileValue } from "./node/file.js";
import { readGit } from "./node/git/index.js";
import { abspath, bytes, realpath, realRoots, text } from "./node/paths.js";
import { DEFAULT_LIMITS, Missing, type Limits, type Resolution, type Value } from "./node/values.js";
import { hostKeys, hostResolvesFromJson, isHostLocal, referencesFromJson } from "./references.js";

export * from "./index.js";
export { DEFAULT_LIMITS, Missing, type Limits };
export { HOST_LOCAL_KEYS, HOST_LOCAL_TYPES, hostKeys, isHostLocal } from "./references.js";

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

/** Resolves host-local `"type:name"` keys for a build (the default reads this host:
 * {@link localValues} inside `allowedRoots`). */
export type HostValues = (
  keys: readonly string[],
  context: { cwd: string; model: string | null; provider: string | null; conversationId: string },
) => Promise<Record<string, string | null>> | Record<string, string | null>;

export interface NodeSyspromptOptions extends SyspromptOptions {
  /** Which host-local values are resolved here and sent: `null` (default), those of the
   * types the server leaves to the host; `true`, every host-local reference; `false`, none. */
  resolveLocally?: boolean | null;
  /** Where host-local resolution may read (default: the conversation's working directory). */
  allowedRoots?: readonly string[] | null;
  /** Bounds of host-local resolution (default: the Python core's). */
  limits?: Partial<Limits>;
  /** Resolves the values instead of {@link localValues}. */
  hostValues?: HostValues | null;
}

interface References {
  keys: readonly string[];
  hostResolves: ReadonlySet<string> | null;
}

const NO_REFERENCES: References = { keys: [], hostResolves: null };
/** Milliseconds before asking again after the server said it resolves every host-local
 * type itself, or that it has no references endpoint (the Python client's five minutes). */
const RECHECK = 300_000;
const REFERENCES_KEPT = 256;

/**
 * The client with host-local values read on this host, as the Python client's default:
 * before a build (first turn, construct, compact) it asks `GET
 * /api/system-prompt/references` which references the template reaches and which
 * host-local types the server leaves to the host (the answer kept by its ETag and
 * revalidated with `If-None-Match`), resolves those here and sends them as `values`. A
 * server that said it resolves everything itself, or that has no such endpoint (404), is
 * not asked again for five minutes.
 */
export class Sysprompt extends CoreSysprompt {
  readonly #resolveLocally: boolean | null;
  readonly #resolve: HostValues;
  readonly #references = new Map<string, [string, References]>();
  #missingUntil = 0;
  #resolvesAllUntil = 0;

  constructor(options: NodeSyspromptOptions) {
    super(options);
    this.#resolveLocally = options.resolveLocally ?? null;
    const roots = options.allowedRoots ?? null;
    this.#resolve =
      options.hostValues ??
      ((keys, context) => localValues(keys, { cwd: context.cwd, roots, ...(options.limits ? { limits: options.limits } : {}) }));
  }

  /** Every `type:name` the template the label (and named prompt) serves can reach for
   * this provider and model (empty when the server does not offer the list). */
  async references(
    options: { provider?: string | null; model?: string | null; label?: string | null; prompt?: string | null } = {},
  ): Promise<readonly string[]> {
    const found = await this.#referencesOf(
      options.provider ?? null,
      options.model ?? null,
      options.label ?? this.label,
      options.prompt ?? this.prompt,
    );
    return found.keys;
  }

  protected override async hostValues(
    conversationId: string,
    label: string | null,
    prompt: string | null,
    given: TurnOptions,
    key?: string,
  ): Promise<Record<string, string | null>> {
    const asks = this.#resolveLocally ?? performance.now() >= this.#resolvesAllUntil;
    if (!asks) return {};
    let options = given;
    if (key && (given.cwd == null || given.model == null || given.provider == null)) {
      options = await this.#frozenContext(conversationId, key, given);
    }
    const model = options.model ?? null;
    const provider = options.provider ?? null;
    const found = await this.#referencesOf(provider, model, label, prompt);
    const keys = hostKeys(found.keys, found.hostResolves, this.#resolveLocally === true);
    if (keys.length === 0) return {};
    return await this.#resolve(keys, { cwd: options.cwd, model, provider, conversationId });
  }

  /** A compaction's context for its host-local values: what it gives, the rest the
   * frozen context's (from memory, else the server's stored prompt); throws
   * {@link InvalidRequest} naming `cwd` when none is given and the server stores none. */
  async #frozenContext(conversationId: string, key: string, given: TurnOptions): Promise<TurnOptions> {
    const entry = this.cache.peek(key);
    let frozen: PromptResult | null = entry && !entry.result.isFallback ? entry.result : null;
    if (!frozen) {
      try {
        frozen = promptFromJson(await this.request({ method: "GET", path: conversationPath(conversationId), retry: true }), conversationId);
      } catch (error) {
        if (!(error instanceof NotFound)) throw error;
      }
    }
    if (!frozen) {
      if (typeof given.cwd === "string") return given;
      const message = `Conversation '${conversationId}' has no stored prompt yet: give cwd, the conversation's working directory.`;
      throw new InvalidRequest(`cwd: ${message}`, { status: 400, errors: { cwd: [message] } });
    }
    return {
      ...given,
      cwd: given.cwd ?? frozen.cwd ?? "",
      model: given.model ?? frozen.model,
      provider: given.provider ?? frozen.provider,
    };
  }

  async #referencesOf(
    provider: string | null,
    model: string | null,
    label: string | null,
    prompt: string | null,
  ): Promise<References> {
    if (performance.now() < this.#missingUntil) return NO_REFERENCES;
    const query: [string, string][] = [
      ["provider", provider ?? ""],
      ["model", model ?? ""],
    ];
    if (label !== null) query.push(["label", label]);
    // A named prompt's own route answers its references alone (`?prompt=` asks for
    // several at once, answered by name); a segment never starts with "-".
    const path =
      prompt === null
        ? "/api/system-prompt/references"
        : `/api/prompts/${prompt.split("/").map(encodeURIComponent).join("/")}/-/system-prompt/references`;
    const key = JSON.stringify([path, query]);
    const known = this.#references.get(key);
    const call: Call = { method: "GET", path, retry: true, query };
    if (known) call.headers = { "If-None-Match": known[0] };
    const answer = await this.send(call);
    if (answer.status === 304 && known) return this.#learned(known[1]);
    if (answer.status === 404 && prompt !== null) {
      // The prompt is unknown (or not this host's): the build says so, with the name.
      return NO_REFERENCES;
    }
    if (answer.status === 404) {
      const message = "sysprompt: the server has no /api/system-prompt/references: no host-local values are sent (asking again in 5 min)";
      if (this.#resolveLocally) this.logger?.warn(message);
      else this.logger?.info?.(message);
      this.#missingUntil = performance.now() + RECHECK;
      return NO_REFERENCES;
    }
    const data = this.decode(answer);
    let found: References;
    try {
      found = { keys: referencesFromJson(data), hostResolves: hostResolvesFromJson(data) };
    } catch (error) {
      throw new ServerError(`unexpected references answer: ${(error as Error).message}`);
    }
    const etag = answer.headers.get("etag");
    if (etag) {
      if (this.#references.size >= REFERENCES_KEPT) this.#references.clear();
      this.#references.set(key, [etag, found]);
    }
    return this.#learned(found);
  }

  /** Remembers for five minutes that the server resolves every host-local type itself,
   * when it says so: a default client then asks no references before a build. */
  #learned(found: References): References {
    if (found.hostResolves?.size === 0) this.#resolvesAllUntil = performance.now() + RECHECK;
    return found;
  }
}
