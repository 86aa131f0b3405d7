/**
 * Message assembly gives what the Python client gives for the same input (every call of
 * the table is run by both, through the repository's Python), is pure (the caller's
 * messages are never changed), idempotent, honours the lock marker and never sends it.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  aiSdk,
  anthropicMessages,
  anthropicSystemBlocks,
  applySystemPrompt,
  lock,
  LOCK_KEY,
  MessageError,
  openaiChat,
  openaiResponses,
  promptCacheKey,
  stripMarkers,
  withSystemPrompt,
  type Prompt,
} from "../src/index.js";
import { pythonAvailable } from "./support/paths.js";
import { pythonMessages, type MessageCall } from "./support/python.js";

const LONG = "Shared rules. 🎉 ".repeat(300); // astral characters: code points, not UTF-16 units
const PROMPT = { text: `${LONG}Per conversation: /home/ada 🌍`, sharedPrefixChars: 300 * 16 };
const HISTORY = [
  { role: "user", content: "hi" },
  { role: "assistant", content: "hello" },
];
const WITH_SYSTEM = [{ role: "system", content: "old", name: "keep" }, ...HISTORY];
const WITH_DEVELOPER = [{ role: "developer", content: "old" }, ...HISTORY];
const LOCKED = [lock({ role: "system", content: "planner" }), { role: "system", content: "second" }, ...HISTORY];

type Fn = (...args: never[]) => unknown;
interface Case {
  name: string;
  fn: string;
  args: unknown[];
  options?: Record<string, unknown>;
}

const FUNCTIONS: Record<string, [Fn, string]> = {
  openaiChat: [openaiChat as Fn, "openai_chat"],
  openaiResponses: [openaiResponses as Fn, "openai_responses"],
  anthropicMessages: [anthropicMessages as Fn, "anthropic_messages"],
  anthropicSystemBlocks: [anthropicSystemBlocks as Fn, "anthropic_system_blocks"],
  applySystemPrompt: [applySystemPrompt as Fn, "apply_system_prompt"],
  withSystemPrompt: [withSystemPrompt as Fn, "with_system_prompt"],
  promptCacheKey: [promptCacheKey as Fn, "prompt_cache_key"],
  stripMarkers: [stripMarkers as Fn, "strip_markers"],
};

const CASES: Case[] = [
  { name: "chat: insert", fn: "openaiChat", args: [HISTORY, "You help."] },
  { name: "chat: replace, role and keys kept", fn: "openaiChat", args: [WITH_SYSTEM, PROMPT] },
  { name: "chat: developer kept", fn: "openaiChat", args: [WITH_DEVELOPER, "P"] },
  { name: "chat: insert as developer", fn: "openaiChat", args: [HISTORY, "P"], options: { role: "developer" } },
  { name: "chat: locked, insert", fn: "openaiChat", args: [LOCKED, PROMPT] },
  { name: "chat: locked, omit", fn: "openaiChat", args: [LOCKED, PROMPT], options: { lockedPolicy: "omit" } },
  { name: "chat: no prompt", fn: "openaiChat", args: [WITH_SYSTEM, null] },
  { name: "chat: no key", fn: "openaiChat", args: [HISTORY, "P"], options: { promptCacheKey: false } },
  { name: "chat: own key", fn: "openaiChat", args: [HISTORY, "P"], options: { promptCacheKey: "mine" } },
  { name: "chat: key too long", fn: "openaiChat", args: [HISTORY, "P"], options: { promptCacheKey: "k".repeat(65) } },
  { name: "chat: bad role", fn: "openaiChat", args: [HISTORY, "P"], options: { role: "user" } },
  { name: "chat: explicit shared prefix", fn: "openaiChat", args: [HISTORY, "abcdef"], options: { sharedPrefixChars: 3 } },
  { name: "chat: empty prompt", fn: "openaiChat", args: [HISTORY, ""] },
  { name: "responses: string input", fn: "openaiResponses", args: ["hi", PROMPT] },
  { name: "responses: list input, locked stripped", fn: "openaiResponses", args: [LOCKED, "P"] },
  { name: "responses: no prompt", fn: "openaiResponses", args: [HISTORY, null] },
  { name: "anthropic: split at the shared prefix", fn: "anthropicMessages", args: [WITH_SYSTEM, PROMPT] },
  { name: "anthropic: ttl", fn: "anthropicMessages", args: [HISTORY, PROMPT], options: { ttl: "1h" } },
  { name: "anthropic: short prefix, one block", fn: "anthropicMessages", args: [HISTORY, { text: "abc def", sharedPrefixChars: 3 }] },
  { name: "anthropic: own split size", fn: "anthropicMessages", args: [HISTORY, { text: "abc def", sharedPrefixChars: 3 }], options: { minSplitChars: 2 } },
  { name: "anthropic: blank tail", fn: "anthropicMessages", args: [HISTORY, { text: "abc \u2003\x1c", sharedPrefixChars: 3 }], options: { minSplitChars: 1 } },
  { name: "anthropic: other system messages", fn: "anthropicMessages", args: [LOCKED, "P"] },
  { name: "anthropic: block contents", fn: "anthropicMessages", args: [[{ role: "system", content: ["a", { type: "text", text: "b" }, " "] }, ...HISTORY], null] },
  { name: "anthropic: blank prompt", fn: "anthropicSystemBlocks", args: [" \n"] },
  { name: "anthropic: bad split", fn: "anthropicSystemBlocks", args: ["P"], options: { minSplitChars: 0 } },
  { name: "apply: twice is once", fn: "applySystemPrompt", args: [applySystemPrompt(LOCKED, "P"), "P"] },
  { name: "with: prepend", fn: "withSystemPrompt", args: [LOCKED, "P"] },
  { name: "key: whole prompt", fn: "promptCacheKey", args: ["Grüße 🎉"] },
  { name: "key: prefix in code points", fn: "promptCacheKey", args: [PROMPT] },
  { name: "key: zero prefix", fn: "promptCacheKey", args: [{ text: "abc", sharedPrefixChars: 0 }] },
  { name: "key: no prompt", fn: "promptCacheKey", args: [null] },
  { name: "key: negative prefix", fn: "promptCacheKey", args: [{ text: "abc", sharedPrefixChars: -1 }] },
  { name: "strip", fn: "stripMarkers", args: [LOCKED] },
];

const SNAKE: Record<string, string> = {
  lockedPolicy: "locked_policy",
  sharedPrefixChars: "shared_prefix_chars",
  promptCacheKey: "prompt_cache_key",
  minSplitChars: "min_split_chars",
};

function forPython(value: unknown): unknown {
  if (value && typeof value === "object" && !Array.isArray(value) && "text" in value && "sharedPrefixChars" in value) {
    const prompt = value as { text: string; sharedPrefixChars: number };
    return { __prompt__: { text: prompt.text, shared_prefix_chars: prompt.sharedPrefixChars } };
  }
  return value;
}

function ours(item: Case): unknown {
  const [fn] = FUNCTIONS[item.fn]!;
  try {
    return JSON.parse(JSON.stringify(fn(...((item.options ? [...item.args, item.options] : item.args) as never[]))));
  } catch (error) {
    return { error: error instanceof MessageError ? "MessageError" : (error as Error).name };
  }
}

describe("message assembly", () => {
  test("every call gives what the Python client gives", { skip: !pythonAvailable() && "no .venv/bin/python" }, () => {
    const calls: MessageCall[] = CASES.map((item) => ({
      fn: FUNCTIONS[item.fn]![1],
      args: item.args.map(forPython),
      kwargs: Object.fromEntries(Object.entries(item.options ?? {}).map(([key, value]) => [SNAKE[key] ?? key, value])),
    }));
    const theirs = pythonMessages(calls);
    for (const [index, item] of CASES.entries()) {
      assert.deepEqual(ours(item), theirs[index], item.name);
    }
    const split = ours(CASES.find((item) => item.name.startsWith("anthropic: split"))!) as { system: unknown[] };
    assert.equal(split.system.length, 2, "the table is not vacuous: the prompt is split in two blocks");
  });

  test("pure: the caller's messages are never changed", () => {
    const messages = structuredClone(LOCKED);
    const before = JSON.stringify(messages);
    openaiChat(messages, PROMPT);
    openaiResponses(messages, PROMPT);
    anthropicMessages(messages, PROMPT);
    applySystemPrompt(messages, PROMPT);
    withSystemPrompt(messages, PROMPT);
    assert.equal(JSON.stringify(messages), before);
    const kept = openaiChat(HISTORY, "P").messages;
    assert.equal(kept[1], HISTORY[0], "unchanged messages are the caller's own objects");
  });

  test("idempotent; the lock marker never reaches a request", () => {
    const once = applySystemPrompt(LOCKED, PROMPT);
    assert.deepEqual(applySystemPrompt(once, PROMPT), once);
    for (const request of [openaiChat(LOCKED, PROMPT), anthropicMessages(LOCKED, PROMPT), openaiResponses(LOCKED, PROMPT)]) {
      assert.ok(!JSON.stringify(request).includes(LOCK_KEY));
    }
  });

  test("the Anthropic split is at the shared prefix, in code points", () => {
    const blocks = anthropicSystemBlocks(PROMPT);
    assert.equal(blocks.length, 2);
    assert.equal(blocks[0]!.text, LONG);
    assert.equal(blocks[0]!.text + blocks[1]!.text, PROMPT.text);
    assert.deepEqual(blocks[0]!.cache_control, { type: "ephemeral" });
  });

  test("aiSdk: the system string, or nothing", () => {
    assert.deepEqual(aiSdk(PROMPT), { system: PROMPT.text });
    assert.deepEqual(aiSdk(null as Prompt), {});
    assert.deepEqual(aiSdk({ text: null }), {});
  });
});
