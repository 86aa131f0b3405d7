/**
 * Where the client keeps the prompts it has been given: an LRU bounded by entries (a
 * `Map`, whose order is insertion order: a hit moves its key to the end). A cached turn
 * is one lookup in it.
 */

import type { PromptResult } from "./result.js";

/** A cached prompt: the result every cached turn answers (the same object each time),
 * when it goes stale (`performance.now()` milliseconds), whether a revalidation is
 * under way, and the key parts it was asked for under. `mismatched` is the result as
 * the last turn whose context differed got it: the same object while turns differ alike. */
export class Entry {
  revalidating = false;
  /** The context-mismatch warning was given for this conversation. */
  told = false;
  mismatched: PromptResult | null = null;

  constructor(
    public result: PromptResult,
    public staleAt: number,
    readonly key: string,
  ) {}
}

/** The memory cache's key of a conversation asked for under `label` and `prompt`
 * (`null`: none asked for): the id itself when neither is, as in the Python client (no
 * id holds a newline, so no key of one kind is one of the other). */
export function cacheKey(conversationId: string, label: string | null, prompt: string | null): string {
  return label === null && prompt === null ? conversationId : `${conversationId}\n${label}\n${prompt}`;
}

/** Key → {@link Entry}, the least recently used dropped beyond `maxEntries`. */
export class MemoryCache {
  readonly #entries = new Map<string, Entry>();
  /** The most recently used key (already last: a hit on it moves nothing). */
  #last: string | null = null;

  constructor(readonly maxEntries = 1024) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError("sysprompt: cacheSize is a whole number >= 1");
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry, marked as just used; `undefined` when there is none. */
  get(key: string): Entry | undefined {
    const entries = this.#entries;
    const entry = entries.get(key);
    if (entry !== undefined && this.#last !== key) {
      entries.delete(key);
      entries.set(key, entry);
      this.#last = key;
    }
    return entry;
  }

  /** The entry without marking it used. */
  peek(key: string): Entry | undefined {
    return this.#entries.get(key);
  }

  put(entry: Entry): void {
    const entries = this.#entries;
    entries.delete(entry.key);
    entries.set(entry.key, entry);
    this.#last = entry.key;
    while (entries.size > this.maxEntries) {
      entries.delete(entries.keys().next().value as string);
    }
  }

  /** Put `next` (or remove the key, for `null`) only if `old` is still the entry: a
   * compaction that happened meanwhile is never undone. */
  replace(old: Entry, next: Entry | null): boolean {
    if (this.#entries.get(old.key) !== old) return false;
    if (next === null) this.#entries.delete(old.key);
    else this.#entries.set(old.key, next); // Map.set keeps the key's place
    return true;
  }

  delete(key: string): boolean {
    return this.#entries.delete(key);
  }
}
