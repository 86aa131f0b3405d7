/**
 * Message assembly: a conversation's system prompt into a provider request — the same
 * pure functions as the Python client's (`sysprompt_core.messages`), with the same
 * results for the same input.
 *
 * * Into the messages: {@link withSystemPrompt} (prepend, never stored) and
 *   {@link applySystemPrompt} (replace the content of the first system or developer
 *   message, its role kept, or insert one; idempotent; a message marked locked with
 *   {@link lock} is never replaced); {@link stripMarkers} (the lock marker never
 *   reaches a provider).
 * * Into a request, where the provider caches it: {@link openaiChat}, {@link
 *   openaiResponses} (`instructions` on every call), {@link anthropicMessages} (`system`
 *   blocks with `cache_control`, split at the shared prefix when it is long enough),
 *   {@link aiSdk} (the Vercel AI SDK's `system`), and {@link promptCacheKey} (OpenAI's
 *   routing key, from the shared prefix).
 *
 * Nothing is mutated: each function returns new arrays and objects; the messages it does
 * not change are the caller's own objects. A prompt is its text, an object with `text`
 * (and `sharedPrefixChars`) such as the client's result, or `null` for no prompt.
 * Lengths and slices are in code points, as the server counts `shared_prefix_chars`.
 */

import { hex, sha256Bytes } from "./sha256.js";
import { codePointIndex, isBlank, utf8 } from "./text.js";

/** The key that marks a message locked; any truthy value locks; it never reaches a provider. */
export const LOCK_KEY = "sysprompt_locked";
/** The roles of a system message (OpenAI's `developer` is the newer name). */
export const SYSTEM_ROLES: ReadonlySet<string> = new Set(["system", "developer"]);
export const PROMPT_CACHE_KEY_PREFIX = "sysprompt-";
/** OpenAI's limit on `prompt_cache_key`, in characters. */
export const PROMPT_CACHE_KEY_MAX_LENGTH = 64;
/** The shortest shared prefix, in code points, worth an Anthropic cache block of its own. */
export const DEFAULT_MIN_SPLIT_CHARS = 4096;

export type Role = "system" | "developer";
export type LockedPolicy = "insert" | "omit";
export type CacheTTL = "5m" | "1h";

/** A prompt with its metadata, such as the client's result. */
export interface PromptLike {
  readonly text: string | null;
  readonly sharedPrefixChars?: number | null;
}

/** What the functions take as the prompt: its text, an object with `text`, or `null`. */
export type Prompt = string | PromptLike | null | undefined;

/** A message-assembly argument is refused; the message says what is accepted. */
export class MessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MessageError";
  }
}

type Message = Record<string, unknown>;

function isRecord(value: unknown): value is Message {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The text of `prompt`: the string itself, its `text`, or `null`. */
export function promptText(prompt: Prompt): string | null {
  if (prompt === null || prompt === undefined) return null;
  if (typeof prompt === "string") return prompt;
  const text: unknown = isRecord(prompt) ? prompt.text : undefined;
  if (text === null || typeof text === "string") return text;
  throw new TypeError("a prompt is a string, null, or {text}");
}

/** Whether `message` is a system message: an object whose role is `system` or `developer`. */
export function isSystem(message: unknown): message is Message {
  if (!isRecord(message)) return false;
  const role = message.role;
  return typeof role === "string" && SYSTEM_ROLES.has(role);
}

/** Whether `message` is an object marked locked. */
export function isLocked(message: unknown): boolean {
  return isRecord(message) && Boolean(message[LOCK_KEY]);
}

/** A copy of `message` marked locked: {@link applySystemPrompt} never replaces it. */
export function lock<T extends object>(message: T): T & { [LOCK_KEY]: true } {
  return { ...message, [LOCK_KEY]: true as const };
}

function unmarked(message: unknown): unknown {
  if (!isRecord(message) || !(LOCK_KEY in message)) return message;
  const { [LOCK_KEY]: _marker, ...rest } = message;
  return rest;
}

/** A new array without the lock marker: a marked message is copied without it; every
 * other item is the caller's own object. */
export function stripMarkers<T>(messages: Iterable<T>): T[] {
  return Array.from(messages, (message) => unmarked(message) as T);
}

function checkRole(role: string): Role {
  if (role === "system" || role === "developer") return role;
  throw new MessageError(`role is 'system' or 'developer', not '${role}'`);
}

/** A new array: `{role, content: text}` first, then `messages` without lock markers; with
 * no prompt just a copy. Applying it twice prepends twice (it is the prepend way). */
export function withSystemPrompt<T>(
  messages: Iterable<T>,
  prompt: Prompt,
  options: { role?: Role } = {},
): (T | { role: Role; content: string })[] {
  const role = checkRole(options.role ?? "system");
  const text = promptText(prompt);
  const rest = stripMarkers(messages);
  return text === null ? rest : [{ role, content: text }, ...rest];
}

export interface ApplyOptions {
  /** The role of an inserted message (a replaced one keeps its own). */
  role?: Role;
  /** When the first system message is locked: insert the prompt before it, or omit it. */
  lockedPolicy?: LockedPolicy;
}

function applyAt<T>(messages: Iterable<T>, text: string | null, options: ApplyOptions): [unknown[], number | null] {
  const role = checkRole(options.role ?? "system");
  const policy = options.lockedPolicy ?? "insert";
  if (policy !== "insert" && policy !== "omit") {
    throw new MessageError(`lockedPolicy is 'insert' or 'omit', not '${String(policy)}'`);
  }
  const result: unknown[] = Array.from(messages);
  if (text === null) return [result, null];
  for (let index = 0; index < result.length; index++) {
    const item = result[index];
    if (!isSystem(item)) continue;
    if (isLocked(item)) {
      if (policy === "omit") return [result, null];
      break;
    }
    result[index] = { ...item, content: text };
    return [result, index];
  }
  result.unshift({ role, content: text });
  return [result, 0];
}

/** A new array with the prompt as its system message, idempotent (twice is once): the
 * first system or developer message gets the prompt as its content (its role and other
 * keys kept), or one is inserted first; a locked one is kept and the prompt inserted
 * before it (or omitted). Lock markers are kept: strip them before sending it yourself. */
export function applySystemPrompt<T>(
  messages: Iterable<T>,
  prompt: Prompt,
  options: ApplyOptions = {},
): (T | { role: Role; content: string })[] {
  return applyAt(messages, promptText(prompt), options)[0] as T[];
}

function sharedChars(prompt: Prompt, explicit: number | null | undefined): number | null {
  let shared: unknown = explicit;
  if (shared === null || shared === undefined) {
    shared = isRecord(prompt) ? prompt.sharedPrefixChars : undefined;
  }
  if (shared === null || shared === undefined) return null;
  if (typeof shared !== "number" || !Number.isInteger(shared) || shared < 0) {
    throw new MessageError(`sharedPrefixChars is a count of characters (0 or more), not ${String(shared)}`);
  }
  return shared;
}

/** `"sysprompt-"` and the SHA-256 (hex) of the prompt's shared prefix, 64 characters in
 * all; of the whole prompt when the prefix is unknown or empty. */
export function promptCacheKey(prompt: Prompt, sharedPrefixChars?: number | null): string {
  const text = promptText(prompt);
  if (text === null) throw new MessageError("no prompt, so no prompt_cache_key");
  const shared = sharedChars(prompt, sharedPrefixChars);
  const prefix = shared ? text.slice(0, codePointIndex(text, shared)) : text;
  return (PROMPT_CACHE_KEY_PREFIX + hex(sha256Bytes(utf8(prefix)))).slice(0, PROMPT_CACHE_KEY_MAX_LENGTH);
}

export interface CacheKeyOptions {
  /** Overrides the prompt's own `sharedPrefixChars`. */
  sharedPrefixChars?: number | null;
  /** `true` (default) derives it, `false` sends none, a string is sent as it is. */
  promptCacheKey?: boolean | string;
}

function addCacheKey(
  request: Record<string, unknown>,
  prompt: Prompt,
  text: string | null,
  options: CacheKeyOptions,
): void {
  const option = options.promptCacheKey ?? true;
  if (typeof option === "string") {
    if (!(option.length > 0 && option.length <= PROMPT_CACHE_KEY_MAX_LENGTH)) {
      throw new MessageError(`a prompt_cache_key has 1 to 64 characters, not ${option.length}`);
    }
    request.prompt_cache_key = option;
  } else if (option && text !== null) {
    request.prompt_cache_key = promptCacheKey(text, sharedChars(prompt, options.sharedPrefixChars));
  }
}

/** The body fields of OpenAI Chat Completions: `messages` with the prompt applied (lock
 * markers stripped) and `prompt_cache_key`. */
export function openaiChat<T>(
  messages: Iterable<T>,
  prompt: Prompt,
  options: ApplyOptions & CacheKeyOptions = {},
): { messages: (T | { role: Role; content: string })[]; prompt_cache_key?: string } {
  const text = promptText(prompt);
  const [applied, at] = applyAt(messages, text, options);
  const request: { messages: T[]; prompt_cache_key?: string } = { messages: stripMarkers(applied as T[]) };
  addCacheKey(request, prompt, at !== null ? text : null, options);
  return request;
}

/** The body fields of OpenAI Responses: `instructions` (sent on every call: the API does
 * not carry it over), `input` as given (a list without lock markers), `prompt_cache_key`. */
export function openaiResponses(
  input: string,
  prompt: Prompt,
  options?: CacheKeyOptions,
): { instructions?: string; input: string; prompt_cache_key?: string };
export function openaiResponses<T>(
  input: Iterable<T>,
  prompt: Prompt,
  options?: CacheKeyOptions,
): { instructions?: string; input: T[]; prompt_cache_key?: string };
export function openaiResponses<T>(
  input: string | Iterable<T>,
  prompt: Prompt,
  options: CacheKeyOptions = {},
): { instructions?: string; input: string | T[]; prompt_cache_key?: string } {
  const text = promptText(prompt);
  const request: { instructions?: string; input: string | T[]; prompt_cache_key?: string } = {} as never;
  if (text !== null) request.instructions = text;
  request.input = typeof input === "string" ? input : stripMarkers(input);
  addCacheKey(request, prompt, text, options);
  return request;
}

export interface AnthropicOptions {
  sharedPrefixChars?: number | null;
  ttl?: CacheTTL | null;
  minSplitChars?: number;
}

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: { type: "ephemeral"; ttl?: CacheTTL };
}

/** The prompt as Anthropic `system` text blocks, each with `cache_control`: two (the
 * shared prefix, the rest) when the prefix has at least `minSplitChars` code points and
 * both parts hold more than whitespace, else one; none without a prompt or for a blank one. */
export function anthropicSystemBlocks(prompt: Prompt, options: AnthropicOptions = {}): AnthropicTextBlock[] {
  const minSplit = options.minSplitChars ?? DEFAULT_MIN_SPLIT_CHARS;
  if (!(Number.isInteger(minSplit) && minSplit >= 1)) {
    throw new MessageError(`minSplitChars is at least 1, not ${String(minSplit)}`);
  }
  const shared = sharedChars(prompt, options.sharedPrefixChars);
  const text = promptText(prompt);
  if (text === null || isBlank(text)) return [];
  let parts = [text];
  const at = shared === null ? text.length : codePointIndex(text, shared);
  if (shared !== null && minSplit <= shared && at < text.length) {
    const head = text.slice(0, at);
    const tail = text.slice(at);
    if (!isBlank(head) && !isBlank(tail)) parts = [head, tail];
  }
  return parts.map((part) => ({
    type: "text" as const,
    text: part,
    cache_control: { type: "ephemeral" as const, ...(options.ttl && { ttl: options.ttl }) },
  }));
}

function blocks(content: unknown): unknown[] {
  if (typeof content === "string") return isBlank(content) ? [] : [{ type: "text", text: content }];
  if (Array.isArray(content)) return content.flatMap((part) => (typeof part === "string" ? blocks(part) : [part]));
  return content == null ? [] : [content];
}

/** The body fields of Anthropic Messages: `system` (the prompt's blocks, then every other
 * system or developer message's content, in order, without `cache_control` of their
 * own) and `messages` without system messages (lock markers stripped). */
export function anthropicMessages<T>(
  messages: Iterable<T>,
  prompt: Prompt,
  options: AnthropicOptions & { lockedPolicy?: LockedPolicy } = {},
): { system?: (AnthropicTextBlock | unknown)[]; messages: T[] } {
  const text = promptText(prompt);
  const [applied, at] = applyAt(messages, text, { lockedPolicy: options.lockedPolicy ?? "insert" });
  const system = applied.flatMap((message, index) =>
    index === at ? anthropicSystemBlocks(prompt, options) : isSystem(message) ? blocks(message.content) : [],
  );
  const request: { system?: unknown[]; messages: T[] } = {} as never;
  if (system.length > 0) request.system = system;
  request.messages = stripMarkers(applied.filter((message, index) => index !== at && !isSystem(message)) as T[]);
  return request;
}

/** The Vercel AI SDK's `system` option (`generateText({model, ...aiSdk(prompt), messages})`):
 * `{system: text}`, or `{}` without a prompt. */
export function aiSdk(prompt: Prompt): { system?: string } {
  const text = promptText(prompt);
  return text === null ? {} : { system: text };
}
