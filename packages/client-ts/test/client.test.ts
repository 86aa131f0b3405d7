/**
 * The client's decisions where the real server cannot be made to misbehave on cue: a
 * local HTTP server (node:http, a real socket) answers what each test needs — 503s and
 * Retry-After, a 500, silence past the timeout, a revalidation's 404, JSON that is not,
 * a references answer with ETag — and records what the client sent.
 */

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { after, before, beforeEach, describe, test } from "node:test";

import { cacheKey } from "../src/cache.js";
import { ServerError, Sysprompt, Unavailable, type SyspromptOptions } from "../src/index.js";
import { Sysprompt as NodeSysprompt } from "../src/node.js";
import { cleanup, temporary, write } from "./support/git.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown> | null;
}

type Handler = (seen: Seen, response: ServerResponse) => void;

let upstream: Server;
let url = "";
let handler: Handler = () => {};
const seen: Seen[] = [];
const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message), info: () => {} };

function answer(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body));
}

function prompt(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    system_prompt: text,
    sha256: null,
    template_version: 3,
    constructed_at: "2026-01-01T00:00:00Z",
    shared_prefix_chars: 2,
    cwd: "/work",
    model: "",
    provider: "",
    ...extra,
  };
}

function client(options: Partial<SyspromptOptions> = {}): Sysprompt {
  return new Sysprompt({ url, token: "t", logger, retries: 2, backoff: 0.01, ...options });
}

function paths(): string[] {
  return seen.map((item) => `${item.method} ${item.url}`);
}

describe("the client's decisions", () => {
  before(async () => {
    upstream = createServer((request, response) => {
      let data = "";
      request.on("data", (chunk: Buffer) => (data += chunk.toString()));
      request.on("end", () => {
        const item = {
          method: request.method ?? "",
          url: request.url ?? "",
          headers: request.headers,
          body: data ? (JSON.parse(data) as Record<string, unknown>) : null,
        };
        seen.push(item);
        handler(item, response);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const address = upstream.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
  });
  after(() => {
    upstream.closeAllConnections();
    return new Promise<void>((resolve) => upstream.close(() => resolve()));
  });
  beforeEach(() => {
    seen.length = 0;
    warnings.length = 0;
  });

  test("the request: the token, JSON, the context, the conversation id percent-encoded (':' kept)", async () => {
    handler = (_, response) => answer(response, 201, prompt("P"));
    await client({ label: "staging" }).systemPrompt("a/b?c:d", {
      cwd: "/work",
      model: "m",
      provider: "p",
      tools: ["t"],
      variables: { v: "1" },
      override: { preset: "x" },
      values: { "file:AGENTS.md": null },
    });
    assert.deepEqual(paths(), ["POST /api/conversations/a%2Fb%3Fc:d/system-prompt/resolve"]);
    assert.equal(seen[0]!.headers.authorization, "Token t");
    assert.equal(seen[0]!.headers["content-type"], "application/json");
    assert.deepEqual(seen[0]!.body, {
      cwd: "/work",
      label: "staging",
      model: "m",
      provider: "p",
      tools: ["t"],
      variables: { v: "1" },
      override: { preset: "x" },
      values: { "file:AGENTS.md": null },
    });
  });

  test("a resolve is retried on 503 (Retry-After honoured); construct never is", async () => {
    let calls = 0;
    handler = (_, response) =>
      ++calls === 1 ? answer(response, 503, { detail: "busy" }, { "retry-after": "0" }) : answer(response, 201, prompt("P"));
    assert.equal((await client().systemPrompt("c1", { cwd: "/work" })).text, "P");
    assert.equal(seen.length, 2);
    seen.length = 0;
    handler = (_, response) => answer(response, 503, { detail: "busy" });
    await assert.rejects(client().construct("c2", { cwd: "/work" }), Unavailable);
    assert.equal(seen.length, 1);
  });

  test("a Retry-After past maxRetryWait is not waited for: the fallback at once", async () => {
    handler = (_, response) => answer(response, 503, { detail: "later" }, { "retry-after": "3600" });
    const started = performance.now();
    const result = await client({ fallback: "F" }).systemPrompt("c3", { cwd: "/work" });
    assert.equal(result.isFallback, true);
    assert.equal(seen.length, 1);
    assert.ok(performance.now() - started < 5000);
    assert.match(warnings.join("\n"), /uses the fallback prompt until compaction: later/);
  });

  test("a 500 is not retried and answers the fallback; JSON that is not answers it too", async () => {
    handler = (_, response) => answer(response, 500, { detail: "boom" });
    assert.equal((await client({ fallback: "F" }).systemPrompt("c4", { cwd: "/work" })).text, "F");
    assert.equal(seen.length, 1);
    handler = (_, response) => answer(response, 201, "<html>");
    await assert.rejects(client().systemPrompt("c5", { cwd: "/work" }), (error: unknown) => {
      assert.ok(error instanceof ServerError && !(error instanceof Unavailable));
      return true;
    });
  });

  test("a server that does not answer in time: Unavailable, then the fallback", async () => {
    handler = () => {}; // never answers
    await assert.rejects(client({ timeout: 0.2, retries: 0 }).systemPrompt("c6", { cwd: "/work" }), /did not answer in time/);
    const result = await client({ timeout: 0.2, retries: 0, fallback: () => null }).systemPrompt("c7", { cwd: "/work" });
    assert.equal(result.isFallback, true);
    assert.equal(result.text, null, "a fallback function answering null: no system prompt");
    assert.equal(result.sha256, null);
    upstream.closeAllConnections();
  });

  test("revalidation: a 404 forgets the conversation; an error keeps it and waits maxAge", async () => {
    handler = (item, response) => (item.method === "POST" ? answer(response, 201, prompt("P")) : answer(response, 404, { detail: "gone" }));
    const sysprompt = client({ maxAge: 0 });
    await sysprompt.systemPrompt("c8", { cwd: "/work" });
    await sysprompt.systemPrompt("c8", { cwd: "/work" });
    await sysprompt.settled();
    assert.equal(sysprompt.cache.size, 0);
    await sysprompt.systemPrompt("c8", { cwd: "/work" });
    assert.deepEqual(paths(), [
      "POST /api/conversations/c8/system-prompt/resolve",
      "GET /api/conversations/c8/system-prompt",
      "POST /api/conversations/c8/system-prompt/resolve",
    ]);
    seen.length = 0;
    handler = (item, response) => (item.method === "POST" ? answer(response, 201, prompt("Q")) : answer(response, 502, {}));
    const patient = client({ maxAge: 3600 });
    await patient.systemPrompt("c9", { cwd: "/work" });
    const entry = patient.cache.peek(cacheKey("c9", null, null))!;
    entry.staleAt = 0;
    await patient.systemPrompt("c9", { cwd: "/work" });
    await patient.settled();
    assert.ok(entry.staleAt > performance.now() + 3_000_000, "asks again only after maxAge");
    assert.equal((await patient.systemPrompt("c9", { cwd: "/work" })).text, "Q");
    assert.equal(seen.filter((item) => item.method === "GET").length, 1, "never retried, never hammered");
    assert.equal(seen[1]!.headers["if-none-match"], undefined, "no sha256 known: no If-None-Match");
  });

  test("the cache is bounded: the least recently used conversation is dropped", async () => {
    handler = (_, response) => answer(response, 201, prompt("P"));
    const sysprompt = client({ cacheSize: 2 });
    for (const id of ["a", "b", "a", "c", "a", "b"]) await sysprompt.systemPrompt(id, { cwd: "/work" });
    assert.deepEqual(
      paths().map((path) => path.split("/")[3]),
      ["a", "b", "c", "b"],
    );
    assert.equal(sysprompt.cache.size, 2);
  });

  test("a turn in another context gets the frozen prompt, marked, with one warning per conversation", async () => {
    handler = (_, response) => answer(response, 201, prompt("P", { model: "m1", provider: "openai" }));
    const sysprompt = client();
    const first = await sysprompt.systemPrompt("c10", { cwd: "/work/", model: "m1" });
    assert.deepEqual(first.contextMismatch, [], "/work/ normalised is /work");
    const moved = await sysprompt.systemPrompt("c10", { cwd: "/elsewhere", model: "m2", provider: "openai" });
    const again = await sysprompt.systemPrompt("c10", { cwd: "/elsewhere", model: "m2" });
    assert.deepEqual(moved.contextMismatch, ["cwd", "model"]);
    assert.equal(again, moved, "turns that differ alike get the same object");
    assert.equal(moved.text, "P");
    assert.equal(warnings.length, 1);
    assert.equal((await sysprompt.systemPrompt("c10", { cwd: "/work" })).contextMismatch.length, 0);
  });

  test("background revalidations are bounded, and none starts after close", async () => {
    let held: (() => void)[] = [];
    handler = (item, response) => {
      if (item.method === "POST") return answer(response, 201, prompt("P"));
      held.push(() => answer(response, 304, undefined));
    };
    const sysprompt = client({ maxAge: 0, maxRevalidations: 2 });
    for (const id of ["r1", "r2", "r3"]) await sysprompt.systemPrompt(id, { cwd: "/work" });
    for (const id of ["r1", "r2", "r3", "r1"]) await sysprompt.systemPrompt(id, { cwd: "/work" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(held.length, 2);
    const closing = sysprompt.close();
    for (const release of held) release();
    held = [];
    await closing;
    await sysprompt.systemPrompt("r3", { cwd: "/work" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(seen.filter((item) => item.method === "GET").length, 2);
  });

  test("options are checked", () => {
    assert.throws(() => client({ maxAge: -1 }), RangeError);
    assert.throws(() => client({ cacheSize: 0 }), RangeError);
    assert.throws(() => new Sysprompt({} as SyspromptOptions), TypeError);
  });

  describe("host-local values (the node client)", () => {
    let folder = "";
    before(() => {
      folder = temporary();
      write(folder, { "AGENTS.md": "Host rules.\n" });
    });
    after(() => cleanup(folder));

    test("only the types the server leaves to the host are sent; the references are revalidated by ETag", async () => {
      let etag = 0;
      handler = (item, response) => {
        if (item.url.startsWith("/api/system-prompt/references")) {
          if (item.headers["if-none-match"] === '"refs-1"') return answer(response, 304, undefined);
          etag++;
          return answer(
            response,
            200,
            { references: ["file:AGENTS.md", "git:branch", "prompt:cwd", "var:x"], host_resolves: ["file"] },
            { etag: `"refs-${etag}"` },
          );
        }
        answer(response, 201, prompt("P"));
      };
      const sysprompt = new NodeSysprompt({ url, token: "t", logger });
      await sysprompt.systemPrompt("h1", { cwd: folder, model: "m" });
      await sysprompt.systemPrompt("h2", { cwd: folder, values: { "file:AGENTS.md": "given" } });
      assert.deepEqual(paths(), [
        "GET /api/system-prompt/references?provider=&model=m",
        "POST /api/conversations/h1/system-prompt/resolve",
        "GET /api/system-prompt/references?provider=&model=",
        "POST /api/conversations/h2/system-prompt/resolve",
      ]);
      assert.deepEqual(seen[1]!.body!["values"], { "file:AGENTS.md": "Host rules." });
      assert.deepEqual(seen[3]!.body!["values"], { "file:AGENTS.md": "given" }, "the caller's values win");
      seen.length = 0;
      await sysprompt.systemPrompt("h3", { cwd: folder, model: "m" });
      assert.equal(seen[0]!.headers["if-none-match"], '"refs-1"');
      assert.deepEqual(seen[1]!.body!["values"], { "file:AGENTS.md": "Host rules." }, "304: the known references");
    });

    test("resolveLocally: true sends every host-local reference; a server without references gets none", async () => {
      handler = (item, response) =>
        item.url.startsWith("/api/system-prompt/references")
          ? answer(response, 200, { references: ["file:AGENTS.md", "prompt:cwd", "system:os"], host_resolves: [] })
          : answer(response, 201, prompt("P"));
      await new NodeSysprompt({ url, token: "t", logger, resolveLocally: true }).systemPrompt("h4", { cwd: folder });
      assert.deepEqual(seen[1]!.body!["values"], { "file:AGENTS.md": "Host rules.", "prompt:cwd": folder, "system:os": process.platform });
      seen.length = 0;
      handler = (item, response) =>
        item.url.startsWith("/api/system-prompt/references") ? answer(response, 404, { detail: "no" }) : answer(response, 201, prompt("P"));
      const old = new NodeSysprompt({ url, token: "t", logger, resolveLocally: true });
      await old.systemPrompt("h5", { cwd: folder });
      await old.systemPrompt("h6", { cwd: folder });
      assert.deepEqual(paths(), [
        "GET /api/system-prompt/references?provider=&model=",
        "POST /api/conversations/h5/system-prompt/resolve",
        "POST /api/conversations/h6/system-prompt/resolve",
      ]);
      assert.equal(seen[1]!.body!["values"], undefined);
      assert.match(warnings.join("\n"), /has no \/api\/system-prompt\/references/);
    });

    test("resolveLocally: false asks nothing and sends nothing", async () => {
      handler = (_, response) => answer(response, 201, prompt("P"));
      await new NodeSysprompt({ url, token: "t", logger, resolveLocally: false }).systemPrompt("h7", { cwd: folder });
      assert.deepEqual(paths(), ["POST /api/conversations/h7/system-prompt/resolve"]);
    });
  });
});
