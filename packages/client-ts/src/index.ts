/**
 * `@sysprompt/client`: the agent host's side of sysprompt, for every runtime with
 * `fetch` (Node ≥ 20, Deno, Bun, Cloudflare Workers, browsers). No dependency.
 *
 * {@link Sysprompt} gives each conversation its frozen system prompt (the server's
 * `resolve` on the first turn, memory on every later one, revalidated in the
 * background; the fallback when the server cannot answer). The message functions put
 * it into a provider request where the provider caches it; the adapters hand it to the
 * OpenAI Agents SDK and Mastra. Host-local values (the working directory, its
 * repository and files), and the references request that says which to send, are
 * `@sysprompt/client/node`'s.
 */

export {
  Sysprompt,
  VERSION,
  type Answer,
  type Call,
  type CompactOptions,
  type Fallback,
  type FallbackContext,
  type Logger,
  type SyspromptOptions,
  type TurnOptions,
} from "./client.js";
export { MemoryCache } from "./cache.js";
export {
  Conflict,
  Forbidden,
  Gone,
  InvalidRequest,
  NotFound,
  PreconditionFailed,
  ServerError,
  SyspromptError,
  Unauthorized,
  Unavailable,
} from "./errors.js";
export type { CompactResult, ContextField, PromptResult } from "./result.js";
export {
  DEFAULT_MIN_SPLIT_CHARS,
  LOCK_KEY,
  MessageError,
  PROMPT_CACHE_KEY_MAX_LENGTH,
  PROMPT_CACHE_KEY_PREFIX,
  SYSTEM_ROLES,
  aiSdk,
  anthropicMessages,
  anthropicSystemBlocks,
  applySystemPrompt,
  isLocked,
  isSystem,
  lock,
  openaiChat,
  openaiResponses,
  promptCacheKey,
  promptText,
  stripMarkers,
  withSystemPrompt,
  type AnthropicOptions,
  type AnthropicTextBlock,
  type ApplyOptions,
  type CacheKeyOptions,
  type CacheTTL,
  type LockedPolicy,
  type Prompt,
  type PromptLike,
  type Role,
} from "./messages.js";
export {
  agentsInstructions,
  agentsModelSettings,
  mastraInstructions,
  type PromptSource,
} from "./adapters.js";
