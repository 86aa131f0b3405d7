/**
 * What the client answers: frozen values, shared as they are (a cached turn answers the
 * same object every time, never a copy).
 */

import { ServerError } from "./errors.js";
import { normpath } from "./text.js";

/** One of the frozen context's fields a turn may differ from. */
export type ContextField = "cwd" | "model" | "provider";

/** A conversation's frozen system prompt (the Python client's `PromptResult`). */
export interface PromptResult {
  /** The prompt; `null` means "send no system prompt" (an empty template). */
  readonly text: string | null;
  /** Hex SHA-256 of the UTF-8 text, `null` with `text`. */
  readonly sha256: string | null;
  /** The template version it was built from (0: the built-in default); `null` for a fallback. */
  readonly templateVersion: number | null;
  /** When the server built it; `null` for a fallback. */
  readonly constructedAt: Date | null;
  /** How many leading code points every conversation of this host, provider and model
   * shares; `null` when the server does not say. */
  readonly sharedPrefixChars: number | null;
  /** The label, release and split arm the server built it from (`null` for a fallback). */
  readonly label: string | null;
  readonly release: number | null;
  readonly arm: number | null;
  /** The named prompt it was frozen from, as the server answers it (else the one asked
   * for; `null` when neither says: the server's default). */
  readonly prompt: string | null;
  /** The server could not be asked: this is the configured fallback. */
  readonly isFallback: boolean;
  /** Answered from the client's memory, without a request. */
  readonly fromCache: boolean;
  readonly conversationId: string | null;
  /** The frozen context the prompt was built for (`null` for a fallback or a server that
   * does not say). */
  readonly cwd: string | null;
  readonly model: string | null;
  readonly provider: string | null;
  /** Which of `cwd`, `model`, `provider` this turn's arguments differ from. */
  readonly contextMismatch: readonly ContextField[];
}

/** The answer of a compaction: the prompt of the compaction turn itself, and the new
 * frozen prompt that later turns answer. */
export interface CompactResult {
  readonly compactionPrompt: string | null;
  readonly prompt: PromptResult;
  /** The fields of the frozen context the call left out and the server kept (`cwd`,
   * `model`, `provider`, `tools`, `variables`, `override`; empty when it does not say). */
  readonly contextKept: readonly string[];
}

const CONTEXT_FIELDS: readonly ContextField[] = ["cwd", "model", "provider"];
const NONE: readonly ContextField[] = Object.freeze([]);

const BLANK: Record<string, unknown> = { isFallback: false, fromCache: false };
for (const field of "sha256 templateVersion constructedAt sharedPrefixChars label release arm prompt conversationId cwd model provider".split(" ")) {
  BLANK[field] = null;
}

export function makeResult(fields: Partial<PromptResult> & { text: string | null }): PromptResult {
  return Object.freeze({
    ...BLANK,
    ...fields,
    contextMismatch: fields.contextMismatch ? Object.freeze([...fields.contextMismatch]) : NONE,
  }) as PromptResult;
}

/** A copy of `result` with `changes`. */
export function withChanges(result: PromptResult, changes: Partial<PromptResult>): PromptResult {
  return makeResult({ ...result, ...changes });
}

function int(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function date(value: unknown): Date | null {
  if (typeof value !== "string") return null;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/** A result from a prompt answer of the API; throws {@link ServerError} when the answer
 * does not have that shape. */
export function promptFromJson(
  data: unknown,
  conversationId: string,
  options: { textKey?: string; fromCache?: boolean; asked?: string | null } = {},
): PromptResult {
  const textKey = options.textKey ?? "system_prompt";
  const answer = (data ?? 0) as Record<string, unknown>;
  const text = answer[textKey] ?? null;
  const sha = answer["sha256"] ?? null;
  if (!data || typeof data !== "object" || Array.isArray(data) || ![text, sha].every((value) => value === null || typeof value === "string")) {
    throw new ServerError(`unexpected answer from the server (no '${textKey}' and 'sha256')`);
  }
  const mismatch = answer["context_mismatch"];
  return makeResult({
    text: text as string | null,
    sha256: sha as string | null,
    templateVersion: int(answer["template_version"]),
    constructedAt: date(answer["constructed_at"]),
    sharedPrefixChars: int(answer["shared_prefix_chars"]),
    fromCache: options.fromCache ?? false,
    conversationId,
    label: str(answer["label"]),
    release: int(answer["release"]),
    arm: int(answer["arm"]),
    prompt: str(answer["prompt"]) ?? options.asked ?? null,
    cwd: str(answer["cwd"]),
    model: str(answer["model"]),
    provider: str(answer["provider"]),
    contextMismatch: Array.isArray(mismatch) ? CONTEXT_FIELDS.filter((name) => mismatch.includes(name)) : NONE,
  });
}

/** Which of `cwd`, `model` and `provider` differ from the context `result` was built
 * for, as the server compares them (`cwd` normalised; a `model` or `provider` not given
 * is no difference; a result that does not say its context: none). */
export function contextMismatch(
  result: PromptResult,
  cwd: string,
  model: string | null | undefined,
  provider: string | null | undefined,
): readonly ContextField[] {
  if (result.cwd === null || (cwd === result.cwd && (model ?? result.model) === result.model && (provider ?? result.provider) === result.provider)) {
    return NONE;
  }
  const given = { cwd: normpath(cwd) === result.cwd ? result.cwd : cwd, model, provider };
  return CONTEXT_FIELDS.filter((field) => given[field] != null && result[field] !== null && given[field] !== result[field]);
}
