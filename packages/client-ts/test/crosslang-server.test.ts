/**
 * The same conversation resolved by the Python client and by the TypeScript client gives
 * the same sha256: against a one-machine server (the stored prompt), and against a
 * central server that resolves nothing of the host's (SYSPROMPT_SERVER_RESOLVES empty),
 * where each client reads the host's branch, status and AGENTS.md itself and sends them,
 * and two conversations built from the two clients' values are the same bytes.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { Sysprompt } from "../src/node.js";
import { cleanup, git, repository, temporary, write } from "./support/git.js";
import { pythonAvailable } from "./support/paths.js";
import { pythonTurn } from "./support/python.js";
import { RealServer } from "./support/server.js";

const quiet = { warn: () => {}, info: () => {} };

describe("the Python and the TypeScript client agree", { skip: !pythonAvailable() && "no .venv/bin/python" }, () => {
  let oneMachine: RealServer;
  let central: RealServer;
  let host = "";
  let repo = "";

  before(async () => {
    oneMachine = new RealServer();
    central = new RealServer({ env: { SYSPROMPT_SERVER_RESOLVES: "" } });
    await Promise.all([oneMachine.start(), central.start()]);
    await oneMachine.setTemplate("You work in [prompt:cwd].\n[file:AGENTS.md]\n");
    await central.setTemplate(
      "Branch: [git:branch].\n[if git:status]Changes:\n[git:status]\n[endif][file:AGENTS.md]\nOn [system:os].\n",
    );
    host = temporary("sysprompt-ts-host-");
    repo = repository(join(host, "repo"), { "AGENTS.md": "Grüße from the host: run the tests.\n", "src/a.py": "a\n" });
    git(repo, "checkout", "-q", "-b", "feature/crosslang");
    write(repo, { "src/a.py": "changed\n", "ünïcödé.txt": "new\n" });
  });
  after(async () => {
    await Promise.all([oneMachine?.close(), central?.close()]);
    if (host) cleanup(host);
  });

  test("one machine: the conversation the TypeScript client built, asked by the Python client", async () => {
    const sysprompt = new Sysprompt({ url: oneMachine.url, token: oneMachine.token, logger: quiet });
    const ours = await sysprompt.systemPrompt("cross-1", { cwd: oneMachine.cwd });
    const theirs = pythonTurn(oneMachine.url, oneMachine.token, "cross-1", oneMachine.cwd);
    assert.equal(theirs.is_fallback, false);
    assert.equal(theirs.sha256, ours.sha256);
    assert.equal(theirs.text, ours.text);
  });

  test("central: each client sends the host's own values, and the prompts are the same bytes", async () => {
    const sysprompt = new Sysprompt({ url: central.url, token: central.token, logger: quiet });
    const ours = await sysprompt.systemPrompt("cross-ts", { cwd: repo });
    const theirs = pythonTurn(central.url, central.token, "cross-py", repo);
    assert.match(ours.text!, /^Branch: feature\/crosslang\.\nChanges:\n M src\/a\.py\n\?\? "\\303\\274n/);
    assert.match(ours.text!, /Grüße from the host/);
    assert.equal(theirs.text, ours.text);
    assert.equal(theirs.sha256, ours.sha256);
    const again = pythonTurn(central.url, central.token, "cross-ts", repo);
    assert.equal(again.sha256, ours.sha256, "the same conversation, asked by the Python client");
  });
});
