/**
 * Adapters: sysprompt where an agent framework has a hook for the system prompt. They
 * import nothing of the framework (their types are structural), so the package has no
 * dependency on any of them.
 *
 * * The OpenAI Agents SDK for JavaScript: `new Agent({instructions:
 *   agentsInstructions(getPrompt)})` — the SDK calls `instructions(runContext, agent)`
 *   before every model call and sends its string as the system message (Chat
 *   Completions) or `instructions` (Responses); {@link agentsModelSettings} puts the
 *   prompt's `prompt_cache_key` into `providerData`, which the SDK merges into the
 *   request.
 * * Mastra: `new Agent({instructions: mastraInstructions(getPrompt)})` — Mastra calls it
 *   with `{requestContext, mastra}` before each generation.
 *
 * `getPrompt` receives the framework's own arguments and answers the prompt (a string,
 * the client's result, `null`) or a promise of one: typically
 * `(ctx) => sysprompt.systemPrompt(ctx.context.conversationId, {cwd})`. No prompt becomes
 * `""` (the Agents SDK's Chat Completions model then sends no system message).
 */

import { promptCacheKey, promptText, type Prompt } from "./messages.js";

/** What `getPrompt` answers: a prompt, or a promise of one. */
export type PromptSource = Prompt | PromiseLike<Prompt>;

function isThenable(value: unknown): value is PromiseLike<Prompt> {
  return value !== null && typeof value === "object" && typeof (value as PromiseLike<Prompt>).then === "function";
}

function textOf(answer: PromptSource): string | Promise<string> {
  if (isThenable(answer)) return Promise.resolve(answer).then((prompt) => promptText(prompt) ?? "");
  return promptText(answer) ?? "";
}

function hook<Args extends unknown[]>(getPrompt: (...args: Args) => PromptSource): (...args: Args) => string | Promise<string> {
  return (...args) => textOf(getPrompt(...args));
}

/** The `instructions` function of an OpenAI Agents SDK `Agent`: `getPrompt(runContext,
 * agent)`'s text, `""` for no prompt (a synchronous answer stays synchronous). */
export const agentsInstructions: <TRunContext, TAgent>(
  getPrompt: (runContext: TRunContext, agent: TAgent) => PromptSource,
) => (runContext: TRunContext, agent: TAgent) => string | Promise<string> = hook;

/** `base` (default: none) with the prompt's `prompt_cache_key` in `providerData`, which
 * the Agents SDK sends with the request (Chat Completions and Responses); `base`
 * unchanged without a prompt, or when its `providerData` already has a key. */
export function agentsModelSettings<T extends object = Record<string, never>>(
  prompt: Prompt,
  options: { base?: T; sharedPrefixChars?: number | null } = {},
): T & { providerData?: Record<string, unknown> } {
  const base = (options.base ?? {}) as T & { providerData?: Record<string, unknown> };
  const text = promptText(prompt);
  if (text === null || (base.providerData !== undefined && "prompt_cache_key" in base.providerData)) return base;
  const shared =
    options.sharedPrefixChars ?? (typeof prompt === "object" && prompt !== null ? prompt.sharedPrefixChars : null);
  return { ...base, providerData: { ...base.providerData, prompt_cache_key: promptCacheKey(text, shared ?? null) } };
}

/** The `instructions` of a Mastra `Agent`: a function of Mastra's `{requestContext,
 * mastra}` giving `getPrompt(args)`'s text, `""` for no prompt. */
export const mastraInstructions: <TArgs>(getPrompt: (args: TArgs) => PromptSource) => (args: TArgs) => string | Promise<string> =
  hook;
