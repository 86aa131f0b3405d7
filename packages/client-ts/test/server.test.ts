/**
 * The client against a real server (the project's gunicorn on SQLite), every request
 * counted in the server's access log: the first turn, later turns with no request,
 * revalidation (304, and a prompt constructed elsewhere arriving), 20 concurrent first
 * turns making one request, compact, a 4xx thrown, the fallback with the server
 * stopped, and named prompts as far as the server knows them.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";

import {
  Conflict,
  Gone,
  InvalidRequest,
  NotFound,
  ServerError,
  Sysprompt,
  SyspromptError,
  Unauthorized,
  Unavailable,
  type PromptResult,
  type SyspromptOptions,
} from "../src/index.js";
import { Sysprompt as NodeSysprompt } from "../src/node.js";
import { pythonAvailable } from "./support/paths.js";
import { RealServer } from "./support/server.js";

const TEMPLATE = "You work in [prompt:cwd].\n[file:AGENTS.md]\n";
const quiet = { warn: () => {}, info: () => {} };
const sha = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

let server: RealServer;
let conversation = 0;
const fresh = (): string => `ts-conv-${++conversation}`;
const resolves = (id: string): string => `POST /api/conversations/${id}/system-prompt/resolve `;
const expected = (): string => `You work in ${server.cwd}.\nRun the tests before you commit.\n`;

function client(options: Partial<SyspromptOptions> = {}): Sysprompt {
  return new Sysprompt({ url: server.url, token: server.token, logger: quiet, ...options });
}

describe("against a real server", { skip: !pythonAvailable() && "no .venv/bin/python" }, () => {
  before(async () => {
    server = new RealServer();
    await server.start();
    await server.setTemplate(TEMPLATE);
  });
  after(async () => {
    await server?.close();
  });

  test("the first turn resolves; 20 later turns make no request and answer the same bytes", async () => {
    const sysprompt = client();
    const id = fresh();
    const first = await sysprompt.systemPrompt(id, { cwd: server.cwd, model: "gpt-5", provider: "openai" });
    assert.equal(first.text, expected());
    assert.equal(first.sha256, sha(expected()));
    assert.equal(first.isFallback, false);
    assert.equal(first.fromCache, false);
    assert.ok(first.templateVersion !== null && first.templateVersion >= 1);
    assert.ok(first.constructedAt instanceof Date);
    assert.equal(typeof first.sharedPrefixChars, "number");
    assert.equal(first.cwd, server.cwd);
    assert.deepEqual(first.contextMismatch, []);
    const later: PromptResult[] = [];
    for (let turn = 0; turn < 20; turn++) {
      later.push(await sysprompt.systemPrompt(id, { cwd: server.cwd, model: "gpt-5", provider: "openai" }));
    }
    assert.ok(later.every((result) => result === later[0]), "one frozen object");
    assert.equal(later[0]!.fromCache, true);
    assert.equal(later[0]!.text, first.text);
    assert.equal(later[0]!.sha256, first.sha256);
    const lines = (await server.synced()).filter((line) => line.includes(id));
    assert.deepEqual(lines, [`${resolves(id)}201`]);
  });

  test("a stale prompt is answered at once and revalidated: 304 keeps it", async () => {
    const sysprompt = client({ maxAge: 0 });
    const id = fresh();
    const first = await sysprompt.systemPrompt(id, { cwd: server.cwd });
    const second = await sysprompt.systemPrompt(id, { cwd: server.cwd });
    assert.equal(second.text, first.text);
    await sysprompt.settled();
    const third = await sysprompt.systemPrompt(id, { cwd: server.cwd });
    assert.equal(third, second, "304: the same cached object");
    await sysprompt.close();
    const lines = (await server.synced()).filter((line) => line.includes(id));
    assert.equal(lines[0], `${resolves(id)}201`);
    assert.ok(lines.slice(1).length >= 1);
    assert.ok(lines.slice(1).every((line) => line === `GET /api/conversations/${id}/system-prompt 304`), lines.join("\n"));
  });

  test("a prompt constructed elsewhere reaches the host through revalidation", async () => {
    const sysprompt = client({ maxAge: 0 });
    const id = fresh();
    const first = await sysprompt.systemPrompt(id, { cwd: server.cwd });
    await server.setTemplate(`Rebuilt. ${TEMPLATE}`);
    try {
      const elsewhere = await server.api("POST", `/api/conversations/${id}/system-prompt/construct`, { cwd: server.cwd });
      assert.equal(elsewhere.status, 200);
      const stale = await sysprompt.systemPrompt(id, { cwd: server.cwd });
      assert.equal(stale.text, first.text, "the turn is never blocked: the cached prompt at once");
      await sysprompt.settled();
      const arrived = await sysprompt.systemPrompt(id, { cwd: server.cwd });
      assert.equal(arrived.text, `Rebuilt. ${expected()}`);
      assert.equal(arrived.sha256, (elsewhere.data as { sha256: string }).sha256);
      assert.equal(arrived.fromCache, true);
    } finally {
      await server.setTemplate(TEMPLATE);
      await sysprompt.close();
    }
  });

  test("20 concurrent first turns of one conversation make one request", async () => {
    const sysprompt = client();
    const id = fresh();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => sysprompt.systemPrompt(id, { cwd: server.cwd })),
    );
    assert.ok(results.every((result) => result === results[0]));
    assert.equal(results[0]!.text, expected());
    assert.equal(await server.count(resolves(id)), 1);
  });

  test("compact answers the compaction prompt and the new frozen prompt, which later turns answer", async () => {
    const sysprompt = client();
    const id = fresh();
    const first = await sysprompt.systemPrompt(id, { cwd: server.cwd });
    await server.setTemplate(`After compaction. ${TEMPLATE}`);
    try {
      const compacted = await sysprompt.compact(id, { cwd: server.cwd });
      assert.equal(compacted.prompt.text, `After compaction. ${expected()}`);
      assert.ok(compacted.compactionPrompt?.startsWith(compacted.prompt.text!), "the fresh prompt, then instructions");
      assert.ok(compacted.compactionPrompt!.length > compacted.prompt.text!.length);
      assert.notEqual(compacted.prompt.sha256, first.sha256);
      const later = await sysprompt.systemPrompt(id, { cwd: server.cwd });
      assert.equal(later.text, compacted.prompt.text);
      assert.equal(later.fromCache, true);
      const lines = (await server.synced()).filter((line) => line.includes(id));
      assert.deepEqual(lines, [`${resolves(id)}201`, `POST /api/conversations/${id}/system-prompt/compact 200`]);
    } finally {
      await server.setTemplate(TEMPLATE);
    }
  });

  test("construct and get; forget drops the conversation here and on the server", async () => {
    const sysprompt = client();
    const id = fresh();
    const built = await sysprompt.construct(id, { cwd: server.cwd });
    assert.equal(built.text, expected());
    const stored = await sysprompt.get(id);
    assert.equal(stored.sha256, built.sha256);
    assert.equal(await sysprompt.forget(id), true);
    assert.equal(sysprompt.cache.size, 0);
    assert.equal((await server.api("GET", `/api/conversations/${id}/system-prompt`)).status, 404);
    assert.equal(await sysprompt.forget(id), false);
  });

  test("a 4xx is thrown with its status and the server's message, even with a fallback, and nothing is cached", async () => {
    const sysprompt = client({ fallback: "You are a helpful assistant." });
    const id = fresh();
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(sysprompt.systemPrompt(id, { cwd: "relative/path" }), (error: unknown) => {
        assert.ok(error instanceof InvalidRequest && error instanceof SyspromptError);
        assert.equal(error.status, 400);
        assert.match(error.message, /cwd/);
        assert.ok(error.errors["cwd"]?.length);
        return true;
      });
    }
    assert.equal(sysprompt.cache.size, 0);
    assert.equal(await server.count(resolves(id)), 2, "each attempt asked: nothing was cached");
    const stranger = new Sysprompt({ url: server.url, token: "not-a-token", fallback: "x", logger: quiet });
    await assert.rejects(stranger.systemPrompt(fresh(), { cwd: server.cwd }), (error: unknown) => {
      assert.ok(error instanceof Unauthorized);
      assert.equal(error.status, 401);
      return true;
    });
  });

  test("the default node client asks the references once, then not for five minutes", async () => {
    const sysprompt = new NodeSysprompt({ url: server.url, token: server.token, logger: quiet });
    const first = fresh();
    const second = fresh();
    assert.equal((await sysprompt.systemPrompt(first, { cwd: server.cwd })).text, expected());
    assert.equal((await sysprompt.systemPrompt(second, { cwd: server.cwd })).text, expected());
    const lines = await server.synced();
    const tail = lines.slice(lines.findIndex((line) => line.includes(first)) - 1);
    assert.deepEqual(tail, [
      "GET /api/system-prompt/references?provider=&model= 200",
      `${resolves(first)}201`,
      `${resolves(second)}201`,
    ]);
  });

  test("named prompts: the prompt asked for is sent, keys the cache, and is read back", async () => {
    await server.setTemplate("Triage tickets in [prompt:cwd].", "support/triage");
    const sent: Record<string, unknown>[] = [];
    const recording: typeof fetch = async (input, init) => {
      if (typeof init?.body === "string") sent.push(JSON.parse(init.body) as Record<string, unknown>);
      return fetch(input, init);
    };
    const sysprompt = client({ prompt: "support/triage", fetch: recording });
    const id = fresh();
    const triage = await sysprompt.systemPrompt(id, { cwd: server.cwd });
    assert.equal(triage.text, `Triage tickets in ${server.cwd}.`);
    assert.equal(triage.prompt, "support/triage");
    assert.equal((await sysprompt.systemPrompt(id, { cwd: server.cwd })).fromCache, true);
    // The same id under another prompt is another entry: the server is asked, and it
    // refuses a later turn naming another prompt than the conversation's (409, both named).
    await assert.rejects(sysprompt.systemPrompt(id, { cwd: server.cwd, prompt: "default" }), (error: unknown) => {
      assert.ok(error instanceof Conflict);
      assert.equal(error.status, 409);
      assert.match(error.message, /support\/triage/);
      assert.match(error.message, /default/);
      return true;
    });
    assert.equal(await server.count(resolves(id)), 2, "(prompt, conversation) is the cache's key");
    assert.deepEqual(
      sent.map((body) => body["prompt"]),
      ["support/triage", "default"],
    );
    const other = fresh();
    const plain = await sysprompt.systemPrompt(other, { cwd: server.cwd, prompt: "default" });
    assert.equal(plain.text, expected());
    assert.equal(plain.prompt, "default");
    await assert.rejects(sysprompt.systemPrompt(fresh(), { cwd: server.cwd, prompt: "support/nope" }), (error: unknown) => {
      assert.ok(error instanceof NotFound);
      assert.match(error.message, /support\/nope/);
      return true;
    });
    // No prompt named: no "prompt" key is sent (an older server sees today's body).
    const unnamed: Record<string, unknown>[] = [];
    const bare = client({
      fetch: async (input, init) => {
        if (typeof init?.body === "string") unnamed.push(JSON.parse(init.body) as Record<string, unknown>);
        return fetch(input, init);
      },
    });
    const answered = await bare.systemPrompt(fresh(), { cwd: server.cwd });
    assert.equal(answered.prompt, "default");
    assert.deepEqual(unnamed, [{ cwd: server.cwd }]);
  });

  test("named prompts: the node client asks the named prompt's own references", async () => {
    await server.setTemplate("Triage tickets in [prompt:cwd].", "support/triage");
    const sysprompt = new NodeSysprompt({ url: server.url, token: server.token, logger: quiet, prompt: "support/triage", resolveLocally: true });
    const id = fresh();
    assert.equal((await sysprompt.systemPrompt(id, { cwd: server.cwd })).text, `Triage tickets in ${server.cwd}.`);
    assert.deepEqual(await sysprompt.references(), ["prompt:cwd"]);
    const lines = await server.synced();
    const tail = lines.slice(lines.findIndex((line) => line.includes(id)) - 1);
    assert.deepEqual(tail.slice(0, 2), [
      "GET /api/prompts/support/triage/-/system-prompt/references?provider=&model= 200",
      `${resolves(id)}201`,
    ]);
  });

  test("archived: a named prompt archived starts no new conversation (410, Gone)", async () => {
    const sysprompt = client({ fallback: "Never for a 4xx." });
    await assert.rejects(sysprompt.systemPrompt(fresh(), { cwd: server.cwd, prompt: "support/old" }), (error: unknown) => {
      assert.ok(error instanceof Gone);
      assert.equal(error.status, 410);
      assert.match(error.message, /support\/old/);
      return true;
    });
    assert.equal(sysprompt.cache.size, 0);
  });

  test("compact without cwd keeps the frozen context; the node client resolves its values there", async () => {
    const sysprompt = new NodeSysprompt({ url: server.url, token: server.token, logger: quiet, resolveLocally: true });
    const id = fresh();
    await sysprompt.systemPrompt(id, { cwd: server.cwd, model: "gpt-5", provider: "openai" });
    const compacted = await sysprompt.compact(id);
    assert.equal(compacted.prompt.text, expected(), "the values were resolved in the frozen cwd");
    assert.deepEqual([...compacted.contextKept].sort(), ["cwd", "model", "override", "provider", "tools", "variables"]);
    assert.equal(compacted.prompt.cwd, server.cwd);
    const lines = (await server.synced()).filter((line) => line.includes(id) || line.includes("/references"));
    assert.ok(lines.at(-1)?.startsWith(`POST /api/conversations/${id}/system-prompt/compact 200`));
    assert.ok(lines.at(-2)?.startsWith("GET /api/system-prompt/references?provider=openai&model=gpt-5 "));
    // Unknown to the server and no cwd: refused here, naming cwd, and nothing is sent.
    const unknown = fresh();
    await assert.rejects(sysprompt.compact(unknown), (error: unknown) => {
      assert.ok(error instanceof InvalidRequest);
      assert.ok(error.errors["cwd"]?.length);
      return true;
    });
    assert.equal(await server.count(`POST /api/conversations/${unknown}/`), 0);
    // The core client sends no values: the server refuses a first compaction without cwd.
    await assert.rejects(client().compact(fresh()), (error: unknown) => error instanceof InvalidRequest && error.status === 400);
  });

  test("the server stopped: the fallback for a new conversation, kept; a cached one outlives the server", async () => {
    const contexts: unknown[] = [];
    const sysprompt = client({
      fallback: (id, context) => {
        contexts.push({ id, cwd: context.cwd, error: context.error instanceof ServerError });
        return "You are a helpful assistant.";
      },
      retries: 0,
      timeout: 5,
    });
    const cached = fresh();
    const known = await sysprompt.systemPrompt(cached, { cwd: server.cwd });
    const bare = client({ retries: 0, timeout: 5 });
    await server.stop();
    try {
      const id = fresh();
      const fallback = await sysprompt.systemPrompt(id, { cwd: server.cwd });
      assert.equal(fallback.text, "You are a helpful assistant.");
      assert.equal(fallback.isFallback, true);
      assert.equal(fallback.sha256, sha("You are a helpful assistant."));
      assert.deepEqual(contexts, [{ id, cwd: server.cwd, error: true }]);
      assert.equal((await sysprompt.systemPrompt(cached, { cwd: server.cwd })).text, known.text);
      await assert.rejects(bare.systemPrompt(fresh(), { cwd: server.cwd }), (error: unknown) => {
        assert.ok(error instanceof Unavailable);
        assert.equal(error.status, null);
        return true;
      });
      await server.start();
      const kept = await sysprompt.systemPrompt(id, { cwd: server.cwd });
      await sysprompt.settled();
      const still = await sysprompt.systemPrompt(id, { cwd: server.cwd });
      assert.equal(kept.isFallback, true, "kept until compaction: the bytes never change mid-conversation");
      assert.equal(kept.fromCache, true);
      assert.equal(still, kept);
      const asked = (await server.synced()).filter((line) => line.includes(id));
      assert.deepEqual(asked, [], "a fallback is never revalidated nor resolved again");
      const compacted = await sysprompt.compact(id, { cwd: server.cwd });
      assert.equal(compacted.prompt.isFallback, false);
      assert.equal((await sysprompt.systemPrompt(id, { cwd: server.cwd })).text, expected());
    } finally {
      if (!server.running) await server.start();
    }
  });
});
