// Type-check and compile the sources and the tests (tsc -p tsconfig.json, into build/),
// then run the tests with Node's own runner. Arguments: test files to run (default: all).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
rmSync(join(root, "build"), { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], {
  cwd: root,
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const files = process.argv.slice(2).map((file) => join("build", "test", file.replace(/\.ts$/, ".js")));
const run = spawnSync(process.execPath, ["--test", "--test-concurrency=1", ...(files.length ? files : ["build/test/"])], {
  cwd: root,
  stdio: "inherit",
});
process.exit(run.status ?? 1);
