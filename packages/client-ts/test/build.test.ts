/**
 * The built package: the core entry within 15 KB minified and free of Node (it imports
 * no module, so it runs at the edge), the node entry importing Node's `fs` alone (no
 * process can be started from it), and the SHA-256 the core carries equal to Node's.
 */

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, test } from "node:test";

import { build } from "esbuild";

import { hex, sha256Bytes } from "../src/sha256.js";
import { PACKAGE } from "./support/paths.js";

async function bundle(entry: string, platform: "neutral" | "node"): Promise<{ code: string; imports: string[] }> {
  const result = await build({
    entryPoints: [join(PACKAGE, "dist", "esm", entry)],
    bundle: true,
    minify: true,
    format: "esm",
    platform,
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.filter((item) => item.external).map((item) => item.path));
  return { code: result.outputFiles[0]!.text, imports: [...new Set(imports)] };
}

describe("the built package", () => {
  test("the core entry: at most 15 KB minified, and it imports nothing", async () => {
    const core = await bundle("index.js", "neutral");
    const size = Buffer.byteLength(core.code);
    console.log(`core entry: ${size} bytes minified, ${gzipSync(core.code, { level: 9 }).length} gzipped`);
    assert.ok(size <= 15_000, `${size} bytes`);
    assert.deepEqual(core.imports, []);
  });

  test("the node entry imports node:fs and nothing else", async () => {
    const node = await bundle("node.js", "node");
    assert.deepEqual(node.imports, ["node:fs"]);
    assert.doesNotMatch(node.code, /child_process|worker_threads|node:os|process\.binding/);
  });

  test("SHA-256 equals Node's at every length around the block boundaries", () => {
    for (const length of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 1000, 65_537]) {
      const data = randomBytes(length);
      assert.equal(hex(sha256Bytes(data)), createHash("sha256").update(data).digest("hex"), `length ${length}`);
    }
  });
});
