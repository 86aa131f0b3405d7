/**
 * The package as it is published: `npm pack`, installed with `npm install <tarball>`
 * (offline: it depends on nothing) into an empty project, where both entries load as ES
 * modules and as CommonJS, their types check under Node's module resolution, and a first
 * turn reaches a server (a local one: the real server's turns are server.test.ts's).
 */

import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { VERSION } from "../src/index.js";
import { cleanup, temporary } from "./support/git.js";
import { PACKAGE } from "./support/paths.js";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

describe("the packed package in an empty project", () => {
  let project = "";

  before(() => {
    project = temporary("sysprompt-ts-consumer-");
    const output = execFileSync(NPM, ["pack", "--json", "--pack-destination", project], { cwd: PACKAGE, encoding: "utf8" });
    const [packed] = JSON.parse(output) as { filename: string; files: { path: string }[] }[];
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
    execFileSync(NPM, ["install", "--offline", "--no-audit", "--no-fund", join(project, packed!.filename)], {
      cwd: project,
      encoding: "utf8",
    });
  });
  after(async () => {
    if (project) cleanup(project);
  });

  test("its version is the Python client's, and it has no dependency", () => {
    const installed = JSON.parse(readFileSync(join(project, "node_modules/@sysprompt/client/package.json"), "utf8")) as {
      version: string;
      dependencies?: object;
    };
    const python = readFileSync(join(PACKAGE, "..", "client", "pyproject.toml"), "utf8");
    assert.equal(installed.version, /^version = "(.+)"$/m.exec(python)![1]);
    assert.equal(installed.version, VERSION);
    assert.equal(installed.dependencies, undefined);
  });

  test("both entries load as ES modules and as CommonJS, and their types check", () => {
    writeFileSync(
      join(project, "esm.mjs"),
      `import { Sysprompt, openaiChat } from "@sysprompt/client";
       import { Sysprompt as NodeSysprompt, localValues } from "@sysprompt/client/node";
       console.log(typeof Sysprompt, typeof openaiChat, typeof NodeSysprompt, typeof localValues);`,
    );
    writeFileSync(
      join(project, "cjs.cjs"),
      `const { Sysprompt, openaiChat } = require("@sysprompt/client");
       const { Sysprompt: NodeSysprompt, localValues } = require("@sysprompt/client/node");
       console.log(typeof Sysprompt, typeof openaiChat, typeof NodeSysprompt, typeof localValues);`,
    );
    for (const file of ["esm.mjs", "cjs.cjs"]) {
      assert.equal(execFileSync(process.execPath, [file], { cwd: project, encoding: "utf8" }).trim(), "function function function function");
    }
    writeFileSync(
      join(project, "typed.mts"),
      `import { Sysprompt, type PromptResult } from "@sysprompt/client";
       import { localValues } from "@sysprompt/client/node";
       const client = new Sysprompt({ url: "http://127.0.0.1:1", token: "t" });
       const turn: Promise<PromptResult> = client.systemPrompt("c", { cwd: "/" });
       const values: Promise<Record<string, string | null>> = localValues(["git:branch"], { cwd: "/" });
       export { turn, values };`,
    );
    writeFileSync(join(project, "typed.cts"), `import client = require("@sysprompt/client");\nexport const make = () => new client.Sysprompt({ url: "u", token: "t" });\n`);
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "node16", moduleResolution: "node16", strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ["typed.mts", "typed.cts"] }),
    );
    execFileSync(process.execPath, [join(PACKAGE, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], {
      cwd: project,
      encoding: "utf8",
    });
  });

  test("a first turn from the installed package reaches a server", async () => {
    const upstream = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(201, { "content-type": "application/json" });
        response.end(JSON.stringify({ system_prompt: `Packed: ${request.method} ${request.url}`, sha256: null }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const address = upstream.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const script = (loader: string): string => `
      ${loader}
      new Sysprompt({ url: ${JSON.stringify(url)}, token: "t", resolveLocally: false })
        .systemPrompt("packed", { cwd: "/" })
        .then((result) => console.log(result.text));`;
    try {
      const run = (args: string[]): Promise<string> =>
        new Promise((resolve, reject) =>
          execFile(process.execPath, args, { cwd: project, encoding: "utf8" }, (error, stdout) =>
            error ? reject(error) : resolve(stdout.trim()),
          ),
        );
      const esm = await run(["--input-type=module", "-e", script('import { Sysprompt } from "@sysprompt/client/node";')]);
      const cjs = await run(["-e", script('const { Sysprompt } = require("@sysprompt/client");')]);
      for (const output of [esm, cjs]) assert.equal(output, "Packed: POST /api/conversations/packed/system-prompt/resolve");
    } finally {
      upstream.close();
    }
  });
});
