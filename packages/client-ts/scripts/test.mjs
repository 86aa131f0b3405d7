// Type-check and compile the sources and the tests (tsc -p tsconfig.json, into build/),
// prepare one migrated SQLite database for every real-server test (one Python start),
// then run the tests with Node's own runner, one file at a time. Arguments: test files
// to run (default: all of test/).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
rmSync(join(root, "build"), { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], {
  cwd: root,
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
// The core entry checked without Node's types: it must run where there is no Node.
const core = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.core.json"], {
  cwd: root,
  stdio: "inherit",
});
if (core.status !== 0) process.exit(core.status ?? 1);
// dist/, which the pack test packs.
const build = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" });
if (build.status !== 0) process.exit(build.status ?? 1);

const env = { ...process.env };
const folder = mkdtempSync(join(tmpdir(), "sysprompt-ts-db-"));
try {
  const support = await import(pathToFileURL(join(root, "build", "test", "support", "server.js")).href);
  const paths = await import(pathToFileURL(join(root, "build", "test", "support", "paths.js")).href);
  const named = process.argv.slice(2).map((file) => file.replace(/\.ts$/, ".js"));
  const servers = ["server.test.js", "crosslang-server.test.js"];
  if (paths.pythonAvailable() && (named.length === 0 || named.some((file) => servers.includes(file)))) {
    const started = Date.now();
    const prepared = support.prepare(folder);
    writeFileSync(join(folder, "prepared.json"), JSON.stringify(prepared));
    env.SYSPROMPT_TS_TEST_DATABASE = join(folder, "prepared.json");
    console.log(`prepared the test database in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const all = readdirSync(join(root, "build", "test")).filter((file) => file.endsWith(".test.js"));
  const files = (named.length ? named : all).map((file) => join("build", "test", file));
  const run = spawnSync(
    process.execPath,
    ["--test", "--test-concurrency=1", ...files],
    { cwd: root, stdio: "inherit", env },
  );
  process.exitCode = run.status ?? 1;
} finally {
  if (existsSync(folder)) rmSync(folder, { recursive: true, force: true });
}
