/**
 * The adapters in the frameworks themselves: the OpenAI Agents SDK for JavaScript (its
 * own Agent and runner, its own OpenAI client) against a local fake OpenAI upstream,
 * whose recorded request bodies must carry the frozen prompt — as `instructions`
 * (Responses) or the system message (Chat Completions) — and the prompt_cache_key of
 * the shared prefix; the openai SDK itself sending `openaiChat` and `openaiResponses` as
 * they are (its types taking them); and Mastra's `instructions` hook, whose signature is checked here
 * by type (Mastra itself is not installed: see the README).
 */

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";

import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";

import {
  agentsInstructions,
  agentsModelSettings,
  mastraInstructions,
  openaiChat,
  openaiResponses,
  promptCacheKey,
  type PromptLike,
} from "../src/index.js";

const PROMPT: PromptLike = { text: `${"Shared rules.\n".repeat(10)}Conversation c-1.`, sharedPrefixChars: 140 };

describe("the OpenAI Agents SDK adapter", () => {
  let upstream: Server;
  let baseURL = "";
  const bodies: { path: string; body: Record<string, unknown> }[] = [];

  before(async () => {
    upstream = createServer((request, response) => {
      let data = "";
      request.on("data", (chunk: Buffer) => (data += chunk.toString()));
      request.on("end", () => {
        bodies.push({ path: request.url ?? "", body: JSON.parse(data || "{}") as Record<string, unknown> });
        response.setHeader("content-type", "application/json");
        const message = { role: "assistant", content: "hello" };
        response.end(
          JSON.stringify(
            request.url?.endsWith("/responses")
              ? {
                  id: "resp_1",
                  object: "response",
                  created_at: 1,
                  status: "completed",
                  model: "gpt-test",
                  output: [{ type: "message", id: "m1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "hello", annotations: [] }] }],
                  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
                }
              : {
                  id: "c1",
                  object: "chat.completion",
                  created: 1,
                  model: "gpt-test",
                  choices: [{ index: 0, finish_reason: "stop", message }],
                  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
                },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const address = upstream.address();
    const port = typeof address === "object" && address ? address.port : 0;
    setTracingDisabled(true);
    baseURL = `http://127.0.0.1:${port}/v1`;
    setDefaultOpenAIClient(new OpenAI({ apiKey: "test", baseURL, maxRetries: 0 }));
  });
  after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  for (const api of ["responses", "chat_completions"] as const) {
    test(`every model call carries the prompt and its cache key (${api})`, async () => {
      setOpenAIAPI(api);
      bodies.length = 0;
      const asked: string[] = [];
      const agent = new Agent<{ conversationId: string }>({
        name: "host",
        model: "gpt-test",
        instructions: agentsInstructions(async (runContext) => {
          asked.push(runContext.context.conversationId);
          return PROMPT;
        }),
        modelSettings: agentsModelSettings(PROMPT),
      });
      const result = await run(agent, "hi", { context: { conversationId: "c-1" } });
      assert.equal(result.finalOutput, "hello");
      assert.deepEqual(asked, ["c-1"]);
      assert.equal(bodies.length, 1);
      const body = bodies[0]!.body;
      assert.equal(body["prompt_cache_key"], promptCacheKey(PROMPT));
      if (api === "responses") {
        assert.equal(bodies[0]!.path, "/v1/responses");
        assert.equal(body["instructions"], PROMPT.text);
      } else {
        assert.equal(bodies[0]!.path, "/v1/chat/completions");
        assert.deepEqual((body["messages"] as unknown[])[0], { role: "system", content: PROMPT.text });
      }
    });
  }

  test("the openai SDK sends the shapes as they are (and its types take them)", async () => {
    const openai = new OpenAI({ apiKey: "test", baseURL, maxRetries: 0 });
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "developer", content: "old" }, { role: "user", content: "hi" }];
    bodies.length = 0;
    const chat: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: "gpt-test", ...openaiChat(history, PROMPT) };
    await openai.chat.completions.create(chat);
    const responses: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: "gpt-test", ...openaiResponses("hi", PROMPT) };
    await openai.responses.create(responses);
    assert.deepEqual(bodies[0]!.body, {
      model: "gpt-test",
      messages: [{ role: "developer", content: PROMPT.text }, { role: "user", content: "hi" }],
      prompt_cache_key: promptCacheKey(PROMPT),
    });
    assert.deepEqual(bodies[1]!.body, { model: "gpt-test", instructions: PROMPT.text, input: "hi", prompt_cache_key: promptCacheKey(PROMPT) });
  });

  test("no prompt: an empty instruction, and the settings unchanged", () => {
    assert.equal(agentsInstructions(() => null)(undefined, undefined), "");
    const base = { temperature: 0.2 };
    assert.equal(agentsModelSettings(null, { base }), base);
    const own = { providerData: { prompt_cache_key: "mine" } };
    assert.equal(agentsModelSettings(PROMPT, { base: own }), own);
    assert.deepEqual(agentsModelSettings("abc", { base }), { temperature: 0.2, providerData: { prompt_cache_key: promptCacheKey("abc") } });
  });
});

// Mastra's hook, as @mastra/core 1.x declares it (types/dynamic-argument.d.ts):
// DynamicArgument<T> = T | (({ requestContext, mastra }) => Promise<T> | T).
type MastraDynamic<T> = T | ((args: { requestContext: Map<string, unknown>; mastra?: unknown }) => Promise<T> | T);

describe("the Mastra adapter", () => {
  test("answers the prompt's text for Mastra's arguments", async () => {
    const instructions: MastraDynamic<string> = mastraInstructions(
      async ({ requestContext }: { requestContext: Map<string, unknown> }) =>
        ({ text: `prompt for ${String(requestContext.get("conversationId"))}` }) as PromptLike,
    );
    assert.equal(typeof instructions, "function");
    const call = instructions as (args: { requestContext: Map<string, unknown> }) => Promise<string>;
    assert.equal(await call({ requestContext: new Map([["conversationId", "c-9"]]) }), "prompt for c-9");
    assert.equal(mastraInstructions(() => "sync")({}), "sync");
    assert.equal(await mastraInstructions(async () => null)({}), "");
  });
});
