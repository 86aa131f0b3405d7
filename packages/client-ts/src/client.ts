/**
 * The client: an agent host's connection to a sysprompt server, with the Python
 * client's meanings (docs/agent-hosts.md).
 *
 * A turn: `systemPrompt` looks the conversation up in memory (one `Map` lookup); a hit
 * answers the same frozen object, with no request, and when it is older than `maxAge`
 * starts a revalidation in the background (`If-None-Match`: 304 keeps it, another
 * prompt replaces it, 404 forgets it). A miss is a first turn: `resolve`, with the
 * host-local values of {@link Sysprompt.hostValues} (none here: the core reads no
 * host; `@sysprompt/client/node`'s client reads them); concurrent first turns of one
 * conversation share one promise, so one request. The server unreachable, timed out or
 * 5xx with nothing cached: the fallback, kept for the conversation until `compact` or
 * `construct`. A 4xx is thrown, never hidden behind the fallback, and nothing is cached.
 */

import { cacheKey, Entry, MemoryCache } from "./cache.js";
import { errorFor, NotFound, ServerError, type SyspromptError, Unavailable } from "./errors.js";
import {
  contextMismatch,
  makeResult,
  promptFromJson,
  withChanges,
  type CompactResult,
  type PromptResult,
} from "./result.js";
import { textSha256 } from "./sha256.js";

export const VERSION = "0.1.0";
const RETRY_STATUSES = [429, 502, 503, 504];

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

/** A compaction's context: as {@link TurnOptions}, but everything may be left out — what
 * is left out (`cwd` too) keeps the conversation's frozen context, which the server
 * keeps and `contextKept` names (a conversation without a stored prompt needs `cwd`). */
export type CompactOptions = Omit<TurnOptions, "cwd"> & { cwd?: string | null };

/** One API request: `retry` when it is idempotent and may be sent again. */
export interface Call {
  method: string;
  path: string;
  retry: boolean;
  body?: unknown;
  headers?: Record<string, string>;
  query?: [string, string][];
}

/** An answer, its body read. */
export interface Answer {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

/** The API path of a conversation's prompt; the id is percent-encoded (`:` kept, as
 * the Python client keeps it), so no id can reach another path. */
export function conversationPath(conversationId: string, action = ""): string {
  return `/api/conversations/${encodeURIComponent(conversationId).replace(/%3A/gi, ":")}/system-prompt${action && `/${action}`}`;
}

/** The seconds a `Retry-After` header asks for (a number or an HTTP date). */
export function retryAfter(value: string | null): number | null {
  const trimmed = value?.trim() ?? "";
  if (/^\d+$/.test(trimmed)) return +trimmed;
  const when = Date.parse(trimmed);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

const now = (): number => performance.now();

/** An agent host's connection to a sysprompt server. See the package's README. */
export class Sysprompt {
  readonly url: string;
  readonly label: string | null;
  readonly prompt: string | null;
  readonly cache: MemoryCache;
  /** Where warnings go. */
  protected readonly logger: Logger | null;
  readonly #fallback: Fallback | null;
  readonly #maxAge: number;
  readonly #timeout: number;
  readonly #retries: number;
  readonly #backoff: number;
  readonly #maxRetryWait: number;
  readonly #maxRevalidations: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  readonly #inflight = new Map<string, Promise<PromptResult>>();
  readonly #revalidations = new Set<Promise<void>>();
  #closed = false;

  constructor(options: SyspromptOptions) {
    const {
      maxAge = 60,
      retries = 2,
      backoff = 0.25,
      maxRetryWait = 10,
      timeout = 10,
      maxRevalidations = 4,
      fetch: given = globalThis.fetch,
    } = options;
    if (![maxAge, retries, backoff, maxRetryWait].every((value) => value >= 0) || !(timeout > 0 && maxRevalidations >= 1)) {
      throw new RangeError("sysprompt: an option is out of range (see its doc)");
    }
    this.url = options.url.replace(/\/+$/, "");
    this.label = options.label ?? null;
    this.prompt = options.prompt ?? null;
    this.cache = new MemoryCache(options.cacheSize);
    this.logger = options.logger === undefined ? { warn: (message) => console.warn(message) } : options.logger;
    this.#fallback = options.fallback ?? null;
    this.#maxAge = maxAge * 1000;
    this.#timeout = timeout * 1000;
    this.#retries = retries;
    this.#backoff = backoff * 1000;
    this.#maxRetryWait = maxRetryWait * 1000;
    this.#maxRevalidations = maxRevalidations;
    this.#headers = { Authorization: `Token ${options.token}`, Accept: "application/json", ...options.headers };
    this.#fetch = (input, init) => given(input, init);
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
    if (entry) {
      if (entry.staleAt <= now()) this.#revalidateSoon(entry);
      return Promise.resolve(this.#forTurn(entry, options));
    }
    let running = this.#inflight.get(key);
    if (!running) {
      running = this.#resolve(conversationId, key, label, prompt, options).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, running);
    }
    return running.then((result) => this.#forTurn(this.cache.peek(key) ?? new Entry(result, 0, key), options, result));
  }

  /** The label and named prompt a call asks for (its own, else the client's), and the
   * cache's key of the conversation under them. */
  #ask(conversationId: string, options: { label?: string | null; prompt?: string | null }): [string | null, string | null, string] {
    const label = options.label ?? this.label;
    const prompt = options.prompt ?? this.prompt;
    return [label, prompt, cacheKey(conversationId, label, prompt)];
  }

  /** The entry's result as this turn answers it (`first`: the first turn's own): itself
   * when the turn's cwd, model and provider match the frozen context, else a copy naming
   * what differs (kept on the entry, so later turns that differ alike get the same
   * object), with one warning per cached conversation. */
  #forTurn(entry: Entry, options: TurnOptions, first?: PromptResult): PromptResult {
    const result = first ?? entry.result;
    const differs = contextMismatch(result, options.cwd, options.model, options.provider);
    if (differs.length === 0) return result.contextMismatch.length ? withChanges(result, { contextMismatch: differs }) : result;
    if (!entry.told) {
      entry.told = true;
      this.logger?.warn(
        `sysprompt: conversation ${result.conversationId} keeps its prompt, frozen for another ${differs.join(", ")} (construct rebuilds it)`,
      );
    }
    const kept = entry.mismatched;
    if (first || !kept || `${kept.contextMismatch}` !== `${differs}`) {
      const answer = withChanges(result, { contextMismatch: differs });
      return first ? answer : (entry.mismatched = answer);
    }
    return kept;
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
      result = this.#prompt(await this.#post(conversationId, "resolve", body, true), conversationId, prompt);
    } catch (error) {
      if (!(error instanceof ServerError)) throw error;
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
      this.logger?.warn(`sysprompt: conversation ${conversationId} uses the fallback prompt until compaction: ${error.message}`);
      result = makeResult({ text, sha256: textSha256(text), isFallback: true, conversationId, prompt });
    }
    this.#install(result, key);
    return result;
  }

  // Other calls -----------------------------------------------------------------------

  /** Build the prompt afresh from what the label serves now and store it in place of the
   * old one (never retried: each call stores a new prompt); later turns answer it. */
  async construct(conversationId: string, options: TurnOptions): Promise<PromptResult> {
    return (await this.#build(conversationId, options, "construct"))[0];
  }

  /** Construct afresh for a compaction turn: the prompt of the compaction turn (with the
   * server's compaction instructions) and the new frozen prompt, which the cache takes
   * (a fallback ends here). What `options` leaves out (`cwd` too) keeps the
   * conversation's frozen context (`contextKept` names it; the host-local values are
   * resolved in the frozen `cwd`); a conversation without a stored prompt needs `cwd`. */
  async compact(conversationId: string, options: CompactOptions = {}): Promise<CompactResult> {
    const [prompt, data] = await this.#build(conversationId, options, "compact", "persisted_system_prompt");
    const compaction = data["system_prompt"];
    const kept = data["context_kept"];
    return Object.freeze({
      compactionPrompt: typeof compaction === "string" ? compaction : null,
      prompt,
      contextKept: Array.isArray(kept) ? kept : [],
    });
  }

  async #build(
    conversationId: string,
    options: TurnOptions | CompactOptions,
    action: string,
    textKey?: string,
  ): Promise<[PromptResult, Record<string, unknown>]> {
    const [label, prompt, key] = this.#ask(conversationId, options);
    const data = await this.#post(conversationId, action, await this.#body(conversationId, label, prompt, options, key));
    const result = this.#prompt(data, conversationId, prompt, textKey);
    this.#install(result, key);
    return [result, data as Record<string, unknown>];
  }

  /** The prompt the server stores for the conversation (always a request; `NotFound`
   * when there is none). A cached entry that is not a fallback takes it. */
  async get(conversationId: string, options: { label?: string | null; prompt?: string | null } = {}): Promise<PromptResult> {
    const [, prompt, key] = this.#ask(conversationId, options);
    const result = this.#prompt(await this.request({ method: "GET", path: conversationPath(conversationId), retry: true }), conversationId, prompt);
    const entry = this.cache.peek(key);
    if (entry && !entry.result.isFallback) {
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
    const had = this.cache.delete(this.#ask(conversationId, options)[2]);
    if (options.onServer === false) return had;
    try {
      await this.request({ method: "DELETE", path: conversationPath(conversationId), retry: true });
    } catch (error) {
      if (error instanceof NotFound) return had;
      throw error;
    }
    return true;
  }

  /** Resolves when the background revalidations under way have ended (an edge runtime
   * hands it to `waitUntil`). */
  async settled(): Promise<void> {
    while (this.#revalidations.size) await Promise.allSettled([...this.#revalidations]);
  }

  /** Start no more revalidations, and wait for those under way. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
  }

  /** The host-local values a build sends (`"type:name"` → text or `null`), before the
   * caller's own `values`: none here (the core reads no host); the node entry's client
   * resolves them. `key`: a compaction's cache key (its `cwd` may then be left out). */
  protected hostValues(
    _conversationId: string,
    _label: string | null,
    _prompt: string | null,
    _options: TurnOptions,
    _key?: string,
  ): Promise<Record<string, string | null>> | Record<string, string | null> {
    return {};
  }

  // Requests ---------------------------------------------------------------------------

  /** The body of a build; `key` (a compaction's cache key) when `cwd` may be left out. */
  async #body(
    conversationId: string,
    label: string | null,
    prompt: string | null,
    options: TurnOptions | CompactOptions,
    key?: string,
  ): Promise<object> {
    const cwd = options.cwd;
    if (!key && typeof cwd != "string") throw new TypeError("sysprompt: cwd is required (a string)");
    const body: Record<string, unknown> = { cwd, prompt, label };
    for (const field of ["model", "provider", "tools", "variables", "override"] as const) body[field] = options[field];
    const values = { ...(await this.hostValues(conversationId, label, prompt, options as TurnOptions, key)), ...options.values };
    if (Object.keys(values).length) body.values = values;
    // `null` and `undefined` are left out (JSON.stringify drops undefined).
    for (const field in body) body[field] ??= undefined;
    return body;
  }

  #post(conversationId: string, action: string, body: object, retry = false): Promise<unknown> {
    return this.request({ method: "POST", path: conversationPath(conversationId, action), retry, body });
  }

  #prompt(data: unknown, conversationId: string, asked: string | null, textKey?: string): PromptResult {
    return promptFromJson(data, conversationId, { textKey, asked });
  }

  /** One API call: the decoded answer of a success, else the typed error. */
  protected async request(call: Call): Promise<unknown> {
    return this.decode(await this.send(call));
  }

  /** The decoded JSON answer of a success; the typed error of an error answer. */
  protected decode(answer: Answer): unknown {
    let data: unknown = null;
    try {
      data = answer.text ? JSON.parse(answer.text) : null;
    } catch {
      if (answer.status < 400) throw new ServerError("the server's answer is not JSON", { status: answer.status });
    }
    if (answer.status >= 400) throw errorFor(answer.status, data, answer.statusText);
    return data;
  }

  /** Sends `call` (again, when it is idempotent and the server could not answer it: up
   * to `retries` times, waiting `backoff × 2ⁿ` or what `Retry-After` asks, unless that is
   * over `maxRetryWait`); throws {@link Unavailable} when no answer came. */
  protected async send(call: Call): Promise<Answer> {
    const url = this.url + call.path + (call.query ? `?${new URLSearchParams(call.query)}` : "");
    const headers: Record<string, string> = { ...this.#headers, ...call.headers };
    let body: string | undefined;
    if (call.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(call.body);
    }
    for (let attempt = 0; ; attempt++) {
      let answer: Answer | null = null;
      let failure: unknown;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.#timeout);
      try {
        const response = await this.#fetch(url, { method: call.method, headers, body, signal: controller.signal });
        answer = { status: response.status, statusText: response.statusText, headers: response.headers, text: await response.text() };
      } catch (error) {
        failure = new Unavailable(
          controller.signal.aborted
            ? `the sysprompt server did not answer in time (${this.#timeout / 1000} s)`
            : `the sysprompt server could not be reached: ${((error as Error).cause as Error | undefined)?.message ?? error}`,
        );
      } finally {
        clearTimeout(timer);
      }
      let delay: number | null = Math.min(this.#backoff * 2 ** attempt, this.#maxRetryWait);
      if (!call.retry || attempt >= this.#retries) delay = null;
      else if (answer) {
        const asked = retryAfter(answer.headers.get("retry-after"));
        if (!RETRY_STATUSES.includes(answer.status)) delay = null;
        else if (asked !== null) delay = asked * 1000 <= this.#maxRetryWait ? asked * 1000 : null;
      }
      if (delay === null) {
        if (answer) return answer;
        throw failure;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  // The cache --------------------------------------------------------------------------

  #install(result: PromptResult, key: string): void {
    const cached = withChanges(result, { fromCache: true, contextMismatch: [] });
    this.cache.put(new Entry(cached, result.isFallback ? Infinity : now() + this.#maxAge, key));
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

  /** 304 or the same prompt: fresh again; another prompt replaces the entry; 404 forgets
   * it; anything else (no answer, an error) keeps it and asks again after `maxAge`. */
  async #revalidate(entry: Entry): Promise<void> {
    const { conversationId, sha256, prompt } = entry.result;
    const call: Call = { method: "GET", path: conversationPath(conversationId!), retry: false };
    if (sha256) call.headers = { "If-None-Match": `"${sha256}"` };
    const answer = await this.send(call).catch(() => null);
    const status = answer?.status;
    entry.staleAt = now() + this.#maxAge;
    if (status === 404) {
      this.cache.replace(entry, null);
    } else if (status === 200) {
      try {
        const result = promptFromJson(JSON.parse(answer!.text), conversationId!, { fromCache: true, asked: prompt });
        if (result.sha256 !== sha256 || result.text !== entry.result.text) {
          this.cache.replace(entry, new Entry(result, entry.staleAt, entry.key));
        }
      } catch (error) {
        this.logger?.warn(`sysprompt: revalidating ${conversationId}: ${(error as Error).message}`);
      }
    } else if (status !== 304) {
      this.logger?.info?.(`sysprompt: revalidating ${conversationId} failed (${status ?? "no answer"})`);
    }
  }
}
