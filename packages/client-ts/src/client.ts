/**
 * The client: an agent host's connection to a sysprompt server, with the Python
 * client's meanings (docs/agent-hosts.md).
 *
 * A turn: `systemPrompt` looks the conversation up in memory (one `Map` lookup); a hit
 * answers the same frozen object, with no request, and when it is older than `maxAge`
 * starts a revalidation in the background (`If-None-Match`: 304 keeps it, another
 * prompt replaces it, 404 forgets it). A miss is a first turn: the references (when
 * host-local values are resolved here), then `resolve`; concurrent first turns of one
 * conversation share one promise, so one request. The server unreachable, timed out or
 * 5xx with nothing cached: the fallback, kept for the conversation until `compact` or
 * `construct`. A 4xx is thrown, never hidden behind the fallback, and nothing is cached.
 */

import { cacheKey, Entry, MemoryCache } from "./cache.js";
import { errorFor, NotFound, ServerError, SyspromptError, Unavailable } from "./errors.js";
import { hostKeys, hostResolvesFromJson, referencesFromJson } from "./references.js";
import {
  contextMismatch,
  makeResult,
  promptFromJson,
  withChanges,
  type CompactResult,
  type ContextField,
  type PromptResult,
} from "./result.js";
import { textSha256 } from "./sha256.js";

export const VERSION = "0.1.0";
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Milliseconds before the references are asked again after the server said it
 * resolves everything itself, or has no references endpoint. */
const REFERENCES_RECHECK = 300_000;
const REFERENCES_KEPT = 256;

/** The context a fallback is made for. */
export interface FallbackContext {
  readonly cwd: string;
  readonly model: string | null;
  readonly provider: string | null;
  readonly label: string | null;
  readonly prompt: string | null;
  /** Why the server could not answer. */
  readonly error: SyspromptError;
}

/** A fallback prompt: a fixed text, or a function of the conversation giving it
 * (`null`: send no system prompt). */
export type Fallback = string | ((conversationId: string, context: FallbackContext) => string | null);

/** What a host-local resolver is told about the conversation. */
export interface HostValueContext {
  readonly cwd: string;
  readonly model: string | null;
  readonly provider: string | null;
  readonly conversationId: string;
}

/** Resolves host-local `"type:name"` keys on the host (`@sysprompt/client/node` gives one). */
export type HostValues = (
  keys: readonly string[],
  context: HostValueContext,
) => Promise<Record<string, string | null>> | Record<string, string | null>;

export interface Logger {
  warn(message: string): void;
  info?(message: string): void;
}

export interface SyspromptOptions {
  /** The server's root, e.g. `http://127.0.0.1:8000`. */
  url: string;
  /** An agent host's API key (`manage.py create_agent_host NAME` prints one). */
  token: string;
  /** Answered when the server cannot answer a first turn (none: the error is thrown). */
  fallback?: Fallback | null;
  /** The named prompt every call asks for unless it names its own (none: the server's default). */
  prompt?: string | null;
  /** The label every call asks for unless it names its own (none: the host's, else production). */
  label?: string | null;
  /** Seconds before a cached prompt is revalidated in the background (60). */
  maxAge?: number;
  /** Seconds per request (10). */
  timeout?: number;
  /** Extra attempts of an idempotent call (2). */
  retries?: number;
  /** Seconds of the first wait between attempts, doubled each time (0.25). */
  backoff?: number;
  /** The longest wait between attempts, also for `Retry-After` (10 s). */
  maxRetryWait?: number;
  /** Background revalidations at once (4). */
  maxRevalidations?: number;
  /** Conversations kept in memory, the least recently used dropped (1024). */
  cacheSize?: number;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
  /** The `fetch` to use (default: the platform's). */
  fetch?: typeof fetch;
  /** Resolves host-local values on the host (`@sysprompt/client/node` sets it). */
  hostValues?: HostValues | null;
  /** Which host-local values are resolved here and sent (with `hostValues`): `null`,
   * those the server leaves to the host; `true`, all; `false`, none. */
  resolveLocally?: boolean | null;
  /** Where warnings go (default: `console.warn`); `null`: nowhere. */
  logger?: Logger | null;
}

/** A call's context: what the prompt is built for (the first turn, construct, compact). */
export interface TurnOptions {
  cwd: string;
  model?: string | null;
  provider?: string | null;
  tools?: readonly string[] | null;
  variables?: Readonly<Record<string, string>> | null;
  override?: string | Readonly<Record<string, unknown>> | null;
  /** The label asked for (else the client's). */
  label?: string | null;
  /** The named prompt asked for (else the client's). */
  prompt?: string | null;
  /** Host-local values given by the caller (`"type:name"` → text, or `null` = does not
   * exist); they win over those the client resolves. */
  values?: Readonly<Record<string, string | null>> | null;
}

interface Call {
  method: string;
  path: string;
  retry: boolean;
  body?: unknown;
  headers?: Record<string, string>;
  query?: [string, string][];
}

interface Answer {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

interface References {
  keys: readonly string[];
  hostResolves: ReadonlySet<string> | null;
}

const NO_REFERENCES: References = { keys: [], hostResolves: null };

/** The API path of a conversation's prompt; the id is percent-encoded (`:` kept, as
 * the Python client keeps it), so no id can reach another path. */
export function conversationPath(conversationId: string, action = ""): string {
  const id = encodeURIComponent(conversationId).replace(/%3A/gi, ":");
  return `/api/conversations/${id}/system-prompt${action ? `/${action}` : ""}`;
}

/** The seconds a `Retry-After` header asks for (a number or an HTTP date). */
export function retryAfter(value: string | null): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const when = Date.parse(trimmed);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - Date.now()) / 1000);
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

const now = (): number => performance.now();
const CONSOLE: Logger = { warn: (message) => console.warn(message) };

/** An agent host's connection to a sysprompt server. See the package's README. */
export class Sysprompt {
  readonly url: string;
  readonly label: string | null;
  readonly prompt: string | null;
  readonly cache: MemoryCache;
  readonly #fallback: Fallback | null;
  readonly #maxAge: number;
  readonly #timeout: number;
  readonly #retries: number;
  readonly #backoff: number;
  readonly #maxRetryWait: number;
  readonly #maxRevalidations: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  readonly #hostValues: HostValues | null;
  readonly #resolveLocally: boolean | null;
  readonly #logger: Logger | null;
  readonly #inflight = new Map<string, Promise<PromptResult>>();
  readonly #revalidations = new Set<Promise<void>>();
  readonly #references = new Map<string, [string, References]>();
  readonly #mismatchTold = new Set<string>();
  #referencesMissingUntil = 0;
  #serverResolvesAllUntil = 0;
  #closed = false;

  constructor(options: SyspromptOptions) {
    if (!options || typeof options.url !== "string" || typeof options.token !== "string") {
      throw new TypeError("new Sysprompt({url, token, ...}): url and token are strings");
    }
    const maxAge = options.maxAge ?? 60;
    const retries = options.retries ?? 2;
    const backoff = options.backoff ?? 0.25;
    const maxRetryWait = options.maxRetryWait ?? 10;
    const timeout = options.timeout ?? 10;
    if (!(maxAge >= 0 && retries >= 0 && backoff >= 0 && maxRetryWait >= 0)) {
      throw new RangeError("maxAge, retries, backoff and maxRetryWait must not be negative");
    }
    if (!(timeout > 0)) throw new RangeError("timeout must be positive");
    const maxRevalidations = options.maxRevalidations ?? 4;
    if (!(maxRevalidations >= 1)) throw new RangeError("maxRevalidations must be at least 1");
    if (options.resolveLocally === true && !options.hostValues) {
      throw new TypeError("resolveLocally needs a hostValues resolver (use @sysprompt/client/node)");
    }
    this.url = options.url.replace(/\/+$/, "");
    this.label = options.label ?? null;
    this.prompt = options.prompt ?? null;
    this.cache = new MemoryCache(options.cacheSize ?? 1024);
    this.#fallback = options.fallback ?? null;
    this.#maxAge = maxAge * 1000;
    this.#timeout = timeout * 1000;
    this.#retries = retries;
    this.#backoff = backoff * 1000;
    this.#maxRetryWait = maxRetryWait * 1000;
    this.#maxRevalidations = maxRevalidations;
    this.#headers = {
      Authorization: `Token ${options.token}`,
      Accept: "application/json",
      ...(typeof document === "undefined" ? { "User-Agent": `sysprompt-client-ts/${VERSION}` } : {}),
      ...options.headers,
    };
    const platformFetch = options.fetch ?? globalThis.fetch;
    this.#fetch = (input, init) => platformFetch(input, init);
    this.#hostValues = options.hostValues ?? null;
    this.#resolveLocally = options.resolveLocally ?? null;
    this.#logger = options.logger === undefined ? CONSOLE : options.logger;
  }

  // Every turn ------------------------------------------------------------------------

  /**
   * The conversation's frozen system prompt: from memory when it holds one (no request;
   * the same object every turn), else the server's `resolve`, else, when the server
   * cannot answer, the fallback. The other options matter on the first turn only;
   * `label` and `prompt` (else the client's) are part of the cache's key.
   */
  systemPrompt(conversationId: string, options: TurnOptions): Promise<PromptResult> {
    const label = options.label ?? this.label;
    const prompt = options.prompt ?? this.prompt;
    const key = cacheKey(conversationId, label, prompt);
    const entry = this.cache.get(key);
    if (entry !== undefined) {
      if (entry.staleAt <= now()) this.#revalidateSoon(entry);
      return Promise.resolve(this.#forTurn(entry.result, options, entry));
    }
    return this.#firstTurn(conversationId, key, label, prompt, options).then((result) =>
      this.#forTurn(result, options, null),
    );
  }

  #forTurn(result: PromptResult, options: TurnOptions, entry: Entry | null): PromptResult {
    const differs = contextMismatch(result, options.cwd, options.model, options.provider);
    if (differs.length === 0) {
      return result.contextMismatch.length === 0 ? result : withChanges(result, { contextMismatch: differs });
    }
    const kept = entry?.mismatched;
    if (kept && sameFields(kept.contextMismatch, differs)) return kept;
    const id = result.conversationId ?? "";
    if (!this.#mismatchTold.has(id)) {
      this.#mismatchTold.add(id);
      if (this.#mismatchTold.size > this.cache.maxEntries) {
        this.#mismatchTold.delete(this.#mismatchTold.values().next().value as string);
      }
      this.#logger?.warn(
        `sysprompt: conversation ${JSON.stringify(id)} keeps the prompt frozen for cwd=${JSON.stringify(result.cwd)}, ` +
          `model=${JSON.stringify(result.model)}, provider=${JSON.stringify(result.provider)}; this turn's ` +
          `${differs.join(", ")} differ(s) and still gets it (construct or compact rebuilds it). Said once per conversation.`,
      );
    }
    const answer = withChanges(result, { contextMismatch: differs });
    if (entry) entry.mismatched = answer;
    return answer;
  }

  #firstTurn(
    conversationId: string,
    key: string,
    label: string | null,
    prompt: string | null,
    options: TurnOptions,
  ): Promise<PromptResult> {
    const running = this.#inflight.get(key);
    if (running !== undefined) return running;
    const promise = this.#resolve(conversationId, key, label, prompt, options).finally(() => {
      this.#inflight.delete(key);
    });
    this.#inflight.set(key, promise);
    return promise;
  }

  async #resolve(
    conversationId: string,
    key: string,
    label: string | null,
    prompt: string | null,
    options: TurnOptions,
  ): Promise<PromptResult> {
    let result: PromptResult;
    try {
      const body = await this.#body(conversationId, label, prompt, options);
      const call = { method: "POST", path: conversationPath(conversationId, "resolve"), retry: true, body };
      result = this.#prompt(this.#json(await this.#send(call)), conversationId, prompt);
    } catch (error) {
      if (!(error instanceof ServerError)) throw error;
      result = this.#fallbackResult(conversationId, label, prompt, options, error);
    }
    this.#install(result, key);
    return result;
  }

  // Other calls -----------------------------------------------------------------------

  /** Build the prompt afresh from what the label serves now and store it in place of the
   * old one (never retried: each call stores a new prompt); later turns answer it. */
  async construct(conversationId: string, options: TurnOptions): Promise<PromptResult> {
    const label = options.label ?? this.label;
    const prompt = options.prompt ?? this.prompt;
    const body = await this.#body(conversationId, label, prompt, options);
    const call = { method: "POST", path: conversationPath(conversationId, "construct"), retry: false, body };
    const result = this.#prompt(this.#json(await this.#send(call)), conversationId, prompt);
    this.#install(result, cacheKey(conversationId, label, prompt));
    return result;
  }

  /** Construct afresh for a compaction turn: the prompt of the compaction turn (with the
   * server's compaction instructions) and the new frozen prompt, which the cache takes
   * (a fallback ends here). */
  async compact(conversationId: string, options: TurnOptions): Promise<CompactResult> {
    const label = options.label ?? this.label;
    const prompt = options.prompt ?? this.prompt;
    const body = await this.#body(conversationId, label, prompt, options);
    const call = { method: "POST", path: conversationPath(conversationId, "compact"), retry: false, body };
    const data = this.#json(await this.#send(call));
    const frozen = this.#prompt(data, conversationId, prompt, "persisted_system_prompt");
    const compaction = (data as Record<string, unknown>)["system_prompt"];
    this.#install(frozen, cacheKey(conversationId, label, prompt));
    return Object.freeze({ compactionPrompt: typeof compaction === "string" ? compaction : null, prompt: frozen });
  }

  /** The prompt the server stores for the conversation (always a request; `NotFound`
   * when there is none). A cached entry that is not a fallback takes it. */
  async get(conversationId: string, options: { label?: string | null; prompt?: string | null } = {}): Promise<PromptResult> {
    const label = options.label ?? this.label;
    const prompt = options.prompt ?? this.prompt;
    const result = this.#prompt(
      this.#json(await this.#send({ method: "GET", path: conversationPath(conversationId), retry: true })),
      conversationId,
      prompt,
    );
    const key = cacheKey(conversationId, label, prompt);
    const entry = this.cache.peek(key);
    if (entry !== undefined && !entry.result.isFallback) {
      if (entry.result.sha256 !== result.sha256 || entry.result.text !== result.text) this.#install(result, key);
      else entry.staleAt = now() + this.#maxAge;
    }
    return result;
  }

  /** Drop the conversation from memory and, with `onServer` (default), delete its stored
   * prompt on the server: `true` when something was there to forget. */
  async forget(
    conversationId: string,
    options: { onServer?: boolean; label?: string | null; prompt?: string | null } = {},
  ): Promise<boolean> {
    const label = options.label ?? this.label;
    const prompt = options.prompt ?? this.prompt;
    const had = this.cache.delete(cacheKey(conversationId, label, prompt));
    if (options.onServer === false) return had;
    try {
      this.#json(await this.#send({ method: "DELETE", path: conversationPath(conversationId), retry: true }));
    } catch (error) {
      if (error instanceof NotFound) return had;
      throw error;
    }
    return true;
  }

  /** Every `type:name` the template the label (and named prompt) serves can reach for this
   * provider and model (empty when the server does not offer the list). */
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

  /** Resolves when the background revalidations under way have ended (an edge runtime
   * hands it to `waitUntil`). */
  async settled(): Promise<void> {
    while (this.#revalidations.size > 0) await Promise.allSettled([...this.#revalidations]);
  }

  /** Start no more revalidations, and wait for those under way. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
  }

  // Requests ---------------------------------------------------------------------------

  async #body(
    conversationId: string,
    label: string | null,
    prompt: string | null,
    options: TurnOptions,
  ): Promise<Record<string, unknown>> {
    if (!options || typeof options.cwd !== "string") throw new TypeError("cwd is required (a string)");
    const body: Record<string, unknown> = { cwd: options.cwd };
    if (prompt !== null) body.prompt = prompt;
    if (label !== null) body.label = label;
    if (options.model != null) body.model = options.model;
    if (options.provider != null) body.provider = options.provider;
    if (options.tools != null) body.tools = [...options.tools];
    if (options.variables != null) body.variables = { ...options.variables };
    if (options.override != null) {
      body.override = typeof options.override === "string" ? options.override : { ...options.override };
    }
    const resolved = await this.#values(conversationId, label, prompt, options);
    const values = { ...resolved, ...options.values };
    if (Object.keys(values).length > 0) body.values = values;
    return body;
  }

  async #values(
    conversationId: string,
    label: string | null,
    prompt: string | null,
    options: TurnOptions,
  ): Promise<Record<string, string | null>> {
    const resolver = this.#hostValues;
    if (resolver === null || !this.#asksReferences()) return {};
    const model = options.model ?? null;
    const provider = options.provider ?? null;
    const found = await this.#referencesOf(provider, model, label, prompt);
    const keys = hostKeys(found.keys, found.hostResolves, this.#resolveLocally === true);
    if (keys.length === 0) return {};
    return await resolver(keys, { cwd: options.cwd, model, provider, conversationId });
  }

  /** Whether a build asks for the references: never with `resolveLocally: false`; by
   * default not while the server is known to resolve every host-local type itself. */
  #asksReferences(): boolean {
    if (this.#resolveLocally === null) return now() >= this.#serverResolvesAllUntil;
    return this.#resolveLocally;
  }

  async #referencesOf(
    provider: string | null,
    model: string | null,
    label: string | null,
    prompt: string | null,
  ): Promise<References> {
    if (now() < this.#referencesMissingUntil) return NO_REFERENCES;
    const query: [string, string][] = [
      ["provider", provider ?? ""],
      ["model", model ?? ""],
    ];
    if (label !== null) query.push(["label", label]);
    if (prompt !== null) query.push(["prompt", prompt]);
    const key = JSON.stringify(query);
    const known = this.#references.get(key);
    const call: Call = {
      method: "GET",
      path: "/api/system-prompt/references",
      retry: true,
      query,
      ...(known ? { headers: { "If-None-Match": known[0] } } : {}),
    };
    const answer = await this.#send(call);
    if (answer.status === 304 && known) return this.#learned(known[1]);
    if (answer.status === 404) {
      const message =
        "sysprompt: the server has no /api/system-prompt/references; host-local values are not sent (asking again in 300 s)";
      if (this.#resolveLocally) this.#logger?.warn(message);
      else this.#logger?.info?.(message);
      this.#referencesMissingUntil = now() + REFERENCES_RECHECK;
      return NO_REFERENCES;
    }
    const data = this.#json(answer);
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

  #learned(found: References): References {
    if (found.hostResolves !== null && found.hostResolves.size === 0) {
      this.#serverResolvesAllUntil = now() + REFERENCES_RECHECK;
    }
    return found;
  }

  #json(answer: Answer): unknown {
    let data: unknown = null;
    if (answer.text) {
      try {
        data = JSON.parse(answer.text);
      } catch {
        if (answer.status < 400) throw new ServerError("the server's answer is not JSON", { status: answer.status });
        data = null;
      }
    }
    if (answer.status >= 400) throw errorFor(answer.status, data, answer.statusText);
    return data;
  }

  #prompt(data: unknown, conversationId: string, asked: string | null, textKey = "system_prompt"): PromptResult {
    try {
      return promptFromJson(data, conversationId, { textKey, asked });
    } catch (error) {
      throw new ServerError(`unexpected answer from the server: ${(error as Error).message}`);
    }
  }

  #delay(call: Call, attempt: number, answer: Answer | null): number | null {
    if (!call.retry || attempt >= this.#retries) return null;
    if (answer !== null) {
      if (!RETRY_STATUSES.has(answer.status)) return null;
      const asked = retryAfter(answer.headers.get("retry-after"));
      if (asked !== null) return asked * 1000 <= this.#maxRetryWait ? asked * 1000 : null;
    }
    return Math.min(this.#backoff * 2 ** attempt, this.#maxRetryWait);
  }

  async #send(call: Call): Promise<Answer> {
    let url = this.url + call.path;
    if (call.query) url += `?${new URLSearchParams(call.query).toString()}`;
    const headers: Record<string, string> = { ...this.#headers, ...call.headers };
    let body: string | undefined;
    if (call.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(call.body);
    }
    for (let attempt = 0; ; attempt++) {
      let answer: Answer | null = null;
      let failure: Unavailable | null = null;
      try {
        answer = await this.#request(url, call.method, headers, body);
      } catch (error) {
        failure = error as Unavailable;
      }
      const delay = this.#delay(call, attempt, answer);
      if (delay === null) {
        if (failure !== null) throw failure;
        return answer as Answer;
      }
      await sleep(delay);
    }
  }

  async #request(url: string, method: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeout);
    try {
      const response = await this.#fetch(url, { method, headers, body, signal: controller.signal });
      const text = await response.text();
      return { status: response.status, statusText: response.statusText, headers: response.headers, text };
    } catch (error) {
      if (timedOut) throw new Unavailable(`the sysprompt server did not answer in time (${this.#timeout / 1000} s)`);
      const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new Unavailable(`the sysprompt server could not be reached: ${cause}`);
    } finally {
      clearTimeout(timer);
    }
  }

  // The cache --------------------------------------------------------------------------

  #install(result: PromptResult, key: string): Entry {
    const cached = withChanges(result, { fromCache: true, contextMismatch: [] });
    const entry = new Entry(cached, result.isFallback ? Infinity : now() + this.#maxAge, key);
    this.cache.put(entry);
    return entry;
  }

  #fallbackResult(
    conversationId: string,
    label: string | null,
    prompt: string | null,
    options: TurnOptions,
    error: ServerError,
  ): PromptResult {
    const fallback = this.#fallback;
    if (fallback === null) throw error;
    const text =
      typeof fallback === "string"
        ? fallback
        : fallback(conversationId, {
            cwd: options.cwd,
            model: options.model ?? null,
            provider: options.provider ?? null,
            label,
            prompt,
            error,
          });
    this.#logger?.warn(
      `sysprompt: conversation ${JSON.stringify(conversationId)} uses the fallback prompt until compaction: ${error.message}`,
    );
    return makeResult({ text, sha256: textSha256(text), isFallback: true, conversationId, prompt });
  }

  // Revalidation -----------------------------------------------------------------------

  #revalidateSoon(entry: Entry): void {
    if (entry.revalidating || this.#closed || this.#revalidations.size >= this.#maxRevalidations) return;
    entry.revalidating = true;
    const running: Promise<void> = this.#revalidate(entry).finally(() => {
      entry.revalidating = false;
      this.#revalidations.delete(running);
    });
    this.#revalidations.add(running);
  }

  async #revalidate(entry: Entry): Promise<void> {
    const conversationId = entry.result.conversationId as string;
    const sha = entry.result.sha256;
    const call: Call = {
      method: "GET",
      path: conversationPath(conversationId),
      retry: false,
      ...(sha ? { headers: { "If-None-Match": `"${sha}"` } } : {}),
    };
    let answer: Answer | null = null;
    try {
      answer = await this.#send(call);
    } catch {
      answer = null; // unreachable or timed out: keep the entry
    }
    const fresh = now() + this.#maxAge;
    const status = answer === null ? 0 : answer.status;
    if (status === 404) {
      this.cache.replace(entry, null);
      return;
    }
    if (status === 200 && answer !== null) {
      let result: PromptResult | null = null;
      try {
        result = promptFromJson(JSON.parse(answer.text), conversationId, {
          fromCache: true,
          asked: entry.result.prompt,
        });
      } catch (error) {
        this.#logger?.warn(`sysprompt: revalidating ${JSON.stringify(conversationId)}: ${(error as Error).message}`);
      }
      if (result !== null && (result.sha256 !== entry.result.sha256 || result.text !== entry.result.text)) {
        this.cache.replace(entry, new Entry(result, fresh, entry.key));
        return;
      }
    } else if (status !== 304) {
      this.#logger?.info?.(
        `sysprompt: revalidating ${JSON.stringify(conversationId)} failed (${answer === null ? "no answer" : `HTTP ${status}`})`,
      );
    }
    entry.staleAt = fresh;
  }
}

function sameFields(a: readonly ContextField[], b: readonly ContextField[]): boolean {
  return a.length === b.length && a.every((field, index) => field === b[index]);
}
