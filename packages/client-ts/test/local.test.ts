/**
 * Host-local values: their bounds (files, sizes, the read budget, time), confinement on
 * what was opened, and the rule that the library never starts a process — proven by
 * running it under Node's permission model with no right to start one.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, symlinkSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { explainLocalValues, localValues, Missing } from "../src/node.js";
import { bytes, openedInside } from "../src/node/paths.js";
import { cleanup, git, repository, temporary, write } from "./support/git.js";
import { PACKAGE } from "./support/paths.js";

let root = "";
let repo = "";

async function reason(key: string, options: Parameters<typeof explainLocalValues>[1]): Promise<string> {
  const value = (await explainLocalValues([key], options)).get(key);
  assert.ok(value instanceof Missing, `${key} exists: ${String(value)}`);
  return value.reason;
}

describe("host-local values on the host", () => {
  before(() => {
    root = temporary();
    repo = repository(join(root, "repo"), { "AGENTS.md": "rules\n", "a.txt": "a\n", "b.txt": "b\n" });
    write(repo, { "c.txt": "untracked\n", "big.md": "x".repeat(2000) });
    write(root, { "outside.txt": "outside\n" });
  });
  after(() => cleanup(root));

  test("git:status above maxGitFiles is missing with the reason; the branch is still read", async () => {
    const values = await explainLocalValues(["git:branch", "git:status"], { cwd: repo, limits: { maxGitFiles: 3 } });
    assert.equal(values.get("git:branch"), "main");
    const status = values.get("git:status");
    assert.ok(status instanceof Missing);
    assert.match(status.reason, /more than 3 files \(maxGitFiles\)/);
    assert.equal((await localValues(["git:status"], { cwd: repo }))["git:status"], "?? big.md\n?? c.txt");
  });

  test("a read past gitTimeout is missing", async () => {
    assert.match(await reason("git:status", { cwd: repo, limits: { gitTimeout: 1e-9 } }), /git timed out after 1e-9s/);
  });

  test("files: maxFileBytes, the read budget (a file read once), the roots", async () => {
    assert.equal(await reason("file:big.md", { cwd: repo, limits: { maxFileBytes: 1000 } }), "larger than 1000 bytes");
    const budget = await explainLocalValues(["file:AGENTS.md", "file:./AGENTS.md", "file:a.txt", "file:b.txt"], {
      cwd: repo,
      limits: { maxReadBytes: 9 },
    });
    assert.equal(budget.get("file:AGENTS.md"), "rules");
    assert.equal(budget.get("file:./AGENTS.md"), "rules", "the same file again costs nothing");
    assert.equal(budget.get("file:a.txt"), "a");
    assert.match((budget.get("file:b.txt") as Missing).reason, /over the read budget: one resolution reads at most 9 bytes \(8 already read/);
    assert.equal(await reason("file:../outside.txt", { cwd: repo }), "outside the allowed roots");
    assert.equal((await localValues(["file:../outside.txt"], { cwd: repo, roots: [root] }))["file:../outside.txt"], "outside");
  });

  test("what counts is the file as opened: an open file outside the roots is refused", () => {
    const outsideFd = openSync(join(root, "outside.txt"), "r");
    const insideFd = openSync(join(repo, "a.txt"), "r");
    try {
      assert.equal(openedInside(outsideFd, bytes(join(repo, "a.txt")), [bytes(repo)]), false);
      assert.equal(openedInside(insideFd, bytes(join(repo, "a.txt")), [bytes(repo)]), true);
    } finally {
      closeSync(outsideFd);
      closeSync(insideFd);
    }
  });

  test("a repository whose git directory leads out of the roots does not exist for git:", async () => {
    const borrowed = join(root, "borrowed");
    mkdirSync(borrowed);
    symlinkSync(join(repo, ".git"), join(borrowed, ".git"));
    assert.match(await reason("git:branch", { cwd: borrowed }), /outside the allowed roots/);
    assert.equal((await localValues(["git:branch"], { cwd: borrowed, roots: [root] }))["git:branch"], "main");
  });

  test("system: values are the host's", async () => {
    const values = await localValues(["system:os", "system:hostname", "system:date", "system:time"], { cwd: repo });
    assert.equal(values["system:os"], process.platform);
    assert.equal(values["system:hostname"], hostname());
    assert.match(values["system:time"]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(values["system:date"], values["system:time"]!.slice(0, 10));
  });

  test("the library starts no process: values read under a permission model that forbids it", () => {
    git(repo, "config", "core.fsmonitor", "touch /tmp/never-run-by-sysprompt");
    const script = `
      import { localValues } from ${JSON.stringify(join(PACKAGE, "build", "src", "node.js"))};
      const values = await localValues(["git:branch", "git:status", "file:AGENTS.md"], { cwd: ${JSON.stringify(repo)} });
      let spawned = "allowed";
      try { (await import("node:child_process")).execFileSync("true"); } catch (error) { spawned = error.code; }
      console.log(JSON.stringify({ values, spawned }));
    `;
    const output = execFileSync(
      process.execPath,
      ["--experimental-permission", "--allow-fs-read=*", "--no-warnings", "--input-type=module", "-e", script],
      { encoding: "utf8" },
    );
    const { values, spawned } = JSON.parse(output) as { values: Record<string, string>; spawned: string };
    assert.equal(spawned, "ERR_ACCESS_DENIED", "the child could start no process");
    assert.deepEqual(values, { "git:branch": "main", "git:status": "?? big.md\n?? c.txt", "file:AGENTS.md": "rules" });
  });
});
