// The TypeScript client's benchmark: a later turn, a first turn and the built size, each
// against a peer measured in the same run.
//
// * A later turn: `await client.systemPrompt(id, {cwd})` of a conversation whose first
//   turn is done — answered from memory, no request (the server's access log is read
//   before and after: it must not grow). Timed in batches (`process.hrtime.bigint()`
//   around --batch calls; one sample is one batch's time per call), interleaved sample
//   by sample with:
//   - the peer: the Langfuse JS SDK's `getPrompt` answered from its cache (a fake
//     Langfuse API on 127.0.0.1 answers its one fetch, counted; the cache TTL is a day,
//     so nothing is fetched while it is timed);
//   - the floor: `await` of a `Map` lookup, the least an async call can cost.
//   Target: the cached turn's median at most 2 µs (and not slower than Langfuse's).
// * A first turn: a new conversation per sample, alternating which goes first:
//   `client.systemPrompt` (the core client: one `resolve`) against a bare `fetch` of the
//   same `resolve` (the request a host would write by hand, its JSON decoded), both
//   against the project's gunicorn on SQLite. Target: at most 1.1× the bare fetch.
//   The node entry's client is measured too (its first build asks the references once;
//   this one-machine server leaves nothing to the host, so later builds do not).
// * The built size: the core entry (dist/esm/index.js) bundled and minified by esbuild,
//   and gzipped. Target: at most 15 KB minified.
//
// Figures are medians (p50) and p95; ratios are of the medians. Targets are printed as
// PASS or MISS, never asserted; the exit status is non-zero only when it could not run.
//
// Run: node bench/client.mjs [--quick] [--samples N] [--first-samples N] [--batch N]
//      (npm run bench; it compiles the package and its test support first)

import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

import { build } from "esbuild";
import { Langfuse } from "langfuse";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const quick = args.includes("--quick");
const SAMPLES = option("--samples", quick ? 100 : 300);
const FIRST = option("--first-samples", quick ? 60 : 200);
const BATCH = option("--batch", 1000);

for (const step of [
  [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"],
  [join(root, "scripts", "build.mjs")],
]) {
  const done = spawnSync(process.execPath, step, { cwd: root, stdio: "inherit" });
  if (done.status !== 0) process.exit(done.status ?? 1);
}
const { Sysprompt } = await import(pathToFileURL(join(root, "dist", "esm", "index.js")).href);
const { Sysprompt: NodeSysprompt } = await import(pathToFileURL(join(root, "dist", "esm", "node.js")).href);
const { RealServer } = await import(pathToFileURL(join(root, "build", "test", "support", "server.js")).href);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)];
const verdict = (ok) => (ok ? "PASS" : "MISS");

async function perCall(call) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < BATCH; i++) await call();
  return Number(process.hrtime.bigint() - start) / BATCH / 1000; // µs
}

async function fakeLangfuse(text) {
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ name: "host", version: 1, prompt: text, type: "text", config: {}, labels: ["production"], tags: [] }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}`, requests: () => requests };
}

const server = new RealServer();
let langfuse = null;
let fake = null;
try {
  await server.start();
  await server.setTemplate("You work in [prompt:cwd].\n[file:AGENTS.md]\n");
  const cwd = server.cwd;
  const quiet = { warn: () => {}, info: () => {} };

  // A later turn.
  const client = new Sysprompt({ url: server.url, token: server.token, logger: quiet, maxAge: 86_400 });
  const first = await client.systemPrompt("bench-cached", { cwd });
  fake = await fakeLangfuse(first.text);
  langfuse = new Langfuse({ publicKey: "pk", secretKey: "sk", baseUrl: fake.url, flushAt: 1_000_000, flushInterval: 3_600_000 });
  await langfuse.getPrompt("host", undefined, { cacheTtlSeconds: 86_400 });
  const map = new Map([["bench-cached", first]]);
  const before = (await server.synced()).length;
  const fetchedBefore = fake.requests();
  const cached = [];
  const peer = [];
  const floor = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    cached.push(await perCall(() => client.systemPrompt("bench-cached", { cwd })));
    peer.push(await perCall(() => langfuse.getPrompt("host", undefined, { cacheTtlSeconds: 86_400 })));
    floor.push(await perCall(async () => map.get("bench-cached")));
  }
  const requestsDuring = (await server.synced()).length - before;
  const fetchedDuring = fake.requests() - fetchedBefore;

  // A first turn.
  const body = (id) => JSON.stringify({ cwd });
  const headers = { Authorization: `Token ${server.token}`, "Content-Type": "application/json", Accept: "application/json" };
  const bare = async (id) => {
    const response = await fetch(`${server.url}/api/conversations/${id}/system-prompt/resolve`, { method: "POST", headers, body: body(id) });
    return (await response.json()).system_prompt;
  };
  const nodeClient = new NodeSysprompt({ url: server.url, token: server.token, logger: quiet });
  await nodeClient.systemPrompt("bench-warm-node", { cwd });
  await bare("bench-warm-bare");
  await client.systemPrompt("bench-warm-core", { cwd });
  const firstCore = [];
  const firstBare = [];
  const firstNode = [];
  for (let sample = 0; sample < FIRST; sample++) {
    const runs = [
      async () => {
        const start = process.hrtime.bigint();
        const result = await client.systemPrompt(`bench-core-${sample}`, { cwd });
        firstCore.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (result.text !== first.text) throw new Error("the first turn answered another prompt");
      },
      async () => {
        const start = process.hrtime.bigint();
        const text = await bare(`bench-bare-${sample}`);
        firstBare.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (text !== first.text) throw new Error("the bare resolve answered another prompt");
      },
      async () => {
        const start = process.hrtime.bigint();
        await nodeClient.systemPrompt(`bench-node-${sample}`, { cwd });
        firstNode.push(Number(process.hrtime.bigint() - start) / 1e6);
      },
    ];
    const order = sample % 3;
    for (const run of [...runs.slice(order), ...runs.slice(0, order)]) await run();
  }

  // The built size.
  const sizes = {};
  for (const [name, platform] of [["index.js", "neutral"], ["node.js", "node"]]) {
    const out = await build({
      entryPoints: [join(root, "dist", "esm", name)],
      bundle: true,
      minify: true,
      format: "esm",
      platform,
      write: false,
      logLevel: "silent",
    });
    const code = out.outputFiles[0].contents;
    sizes[name] = { minified: code.length, gzipped: gzipSync(code, { level: 9 }).length };
  }

  const cachedP50 = median(cached);
  const peerP50 = median(peer);
  const ratio = median(firstCore) / median(firstBare);
  console.log(`\nnode ${process.version}, ${SAMPLES} samples × ${BATCH} calls; first turns: ${FIRST} each\n`);
  console.log("later turn (from memory)      p50 µs    p95 µs");
  console.log(`  sysprompt systemPrompt    ${cachedP50.toFixed(3).padStart(8)}  ${p95(cached).toFixed(3).padStart(8)}`);
  console.log(`  Langfuse getPrompt        ${peerP50.toFixed(3).padStart(8)}  ${p95(peer).toFixed(3).padStart(8)}   (${(peerP50 / cachedP50).toFixed(2)}× sysprompt's)`);
  console.log(`  floor: await Map.get      ${median(floor).toFixed(3).padStart(8)}  ${p95(floor).toFixed(3).padStart(8)}`);
  console.log(`  requests while timed: sysprompt server ${requestsDuring}, Langfuse ${fetchedDuring}`);
  console.log("first turn (new conversation)  p50 ms    p95 ms");
  console.log(`  sysprompt systemPrompt    ${median(firstCore).toFixed(3).padStart(8)}  ${p95(firstCore).toFixed(3).padStart(8)}`);
  console.log(`  bare fetch of resolve     ${median(firstBare).toFixed(3).padStart(8)}  ${p95(firstBare).toFixed(3).padStart(8)}`);
  console.log(`  node entry's client       ${median(firstNode).toFixed(3).padStart(8)}  ${p95(firstNode).toFixed(3).padStart(8)}`);
  console.log("built size                    minified   gzipped");
  for (const [name, size] of Object.entries(sizes)) {
    console.log(`  ${name.padEnd(27)} ${String(size.minified).padStart(8)}  ${String(size.gzipped).padStart(8)}`);
  }
  console.log("\ntargets");
  console.log(`  ${verdict(cachedP50 <= 2)} later turn p50 ${cachedP50.toFixed(3)} µs ≤ 2 µs`);
  console.log(`  ${verdict(cachedP50 <= peerP50)} later turn not slower than Langfuse's cached getPrompt (${(peerP50 / cachedP50).toFixed(2)}×)`);
  console.log(`  ${verdict(requestsDuring === 0)} no request during later turns`);
  console.log(`  ${verdict(ratio <= 1.1)} first turn ${ratio.toFixed(3)}× the bare fetch ≤ 1.1×`);
  console.log(`  ${verdict(sizes["index.js"].minified <= 15_000)} core entry ${sizes["index.js"].minified} bytes ≤ 15 KB minified`);
} finally {
  await langfuse?.shutdownAsync().catch(() => {});
  fake?.server.close();
  await server.close();
}
