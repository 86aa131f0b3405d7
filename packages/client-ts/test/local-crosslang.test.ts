/**
 * Host-local values, byte for byte: the same references in the same directories resolved
 * by the Python client (`resolve_host_values`, run by the repository's Python) and by
 * `localValues` give the same JSON — branches, a detached HEAD, a worktree, a packed
 * repository, statuses of every kind, files with Unicode, a missing file, a binary one,
 * a symlink out of the roots. The few statuses the TypeScript reader does not reproduce
 * (an inexact rename, a populated submodule) are missing there, with the reason.
 */

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { explainLocalValues, localValues, Missing } from "../src/node.js";
import { cleanup, git, repository, temporary, write } from "./support/git.js";
import { pythonAvailable } from "./support/paths.js";
import { pythonValues, type Case } from "./support/python.js";

const GIT = ["git:branch", "git:status"];

interface Scenario extends Case {
  name: string;
  /** Keys the TypeScript reader leaves missing where Python answers (not reproduced). */
  tsMissing?: string[];
}

let root = "";
const scenarios: Scenario[] = [];
let python: Record<string, string | null>[] = [];

function scenario(name: string, cwd: string, keys: string[], extra: Partial<Scenario> = {}): void {
  scenarios.push({ name, cwd, keys, roots: extra.roots ?? null, ...extra });
}

function build(): void {
  root = temporary();
  const outside = join(root, "outside");
  write(outside, { "secret.txt": "outside the roots\n" });

  // A branch, every kind of change, ignore rules, Unicode and spaced names.
  const changes = repository(join(root, "changes"), {
    "AGENTS.md": "Run the tests.\n",
    "src/app.py": "print('hi')\n",
    "src/lib/util.py": "x = 1\n",
    "gone.txt": "soon deleted\n",
    "staged-gone.txt": "deleted in the index\n",
    "tool.sh": "#!/bin/sh\n",
    "link-target.txt": "target\n",
    "ünïcödé.md": "Grüße\n",
    "with space.txt": "spaced\n",
    "keep/.gitkeep": "",
    "renamed-from.txt": "a file that will move, long enough to be itself\n",
    ".gitignore": "*.log\n/build/\ncache/\n!important.log\nnested/**/tmp\n",
  });
  git(changes, "checkout", "-q", "-b", "feature/ts");
  write(changes, {
    "AGENTS.md": "Run the tests, then lint.\n",
    "src/app.py": "print('hello')\n",
    "new-staged.txt": "staged\n",
    "untracked.txt": "new\n",
    "dir/a.txt": "a\n",
    "dir/sub/b.txt": "b\n",
    "ignored.log": "noise\n",
    "important.log": "kept\n",
    "build/out.txt": "built\n",
    "src/cache/x.bin": "cached\n",
    "only-ignored/x.log": "noise\n",
    "nested/a/tmp": "tmp\n",
    "src/lib/new.py": "y = 2\n",
    "日本語/ファイル.txt": "テキスト\n",
    "tab\tname.txt": "tab\n",
    'quote"name.txt': "quote\n",
  });
  mkdirSync(join(changes, "empty-dir/inner"), { recursive: true });
  git(changes, "add", "new-staged.txt", "src/app.py");
  write(changes, { "src/app.py": "print('hello, world')\n" });
  unlinkSync(join(changes, "gone.txt"));
  git(changes, "rm", "-q", "--cached", "staged-gone.txt");
  chmodSync(join(changes, "tool.sh"), 0o755);
  unlinkSync(join(changes, "link-target.txt"));
  symlinkSync("AGENTS.md", join(changes, "link-target.txt"));
  git(changes, "mv", "renamed-from.txt", "renamed-to.txt");
  scenario("a branch with every kind of change", changes, [...GIT, "git:root"]);
  scenario("the same from a subdirectory", join(changes, "src/lib"), GIT);
  scenario("the same from a subdirectory, roots the repository", join(changes, "src"), GIT, { roots: [changes] });

  const quoting = repository(join(root, "quoting"), { "a.txt": "a\n" });
  write(quoting, { "ünïcödé new.md": "x\n", "plain.txt": "y\n" });
  git(quoting, "config", "core.quotePath", "false");
  git(quoting, "config", "status.relativePaths", "false");
  scenario("core.quotePath off, relative paths off", quoting, GIT);

  const all = repository(join(root, "all-untracked"), { "a.txt": "a\n", ".gitignore": "*.tmp\n" });
  write(all, { "u/v/w.txt": "w\n", "u/x.tmp": "x\n", "u/y.txt": "y\n" });
  git(all, "config", "status.showUntrackedFiles", "all");
  scenario("status.showUntrackedFiles=all", all, GIT);
  const none = repository(join(root, "no-untracked"), { "a.txt": "a\n" });
  write(none, { "u.txt": "u\n", "a.txt": "changed\n" });
  git(none, "config", "status.showUntrackedFiles", "no");
  scenario("status.showUntrackedFiles=no", none, GIT);

  const clean = repository(join(root, "clean"), { "a.txt": "a\n" });
  scenario("a clean tree", clean, GIT);

  // A detached HEAD, packed objects and references (git gc: packs with deltas).
  const packed = repository(join(root, "packed"), { "a.txt": "one\n".repeat(200), "d/b.txt": "two\n" });
  for (let i = 0; i < 5; i++) {
    write(packed, { "a.txt": `${"one\n".repeat(200)}change ${i}\n`, [`d/f${i}.txt`]: `file ${i}\n` });
    git(packed, "add", "-A");
    git(packed, "commit", "-q", "-m", `change ${i}`);
  }
  git(packed, "tag", "v1");
  git(packed, "gc", "-q", "--aggressive");
  write(packed, { "d/b.txt": "two, changed\n" });
  scenario("packed objects and references", packed, GIT);
  const detached = repository(join(root, "detached"), { "a.txt": "a\n" });
  write(detached, { "a.txt": "b\n" });
  git(detached, "commit", "-q", "-am", "second");
  git(detached, "checkout", "-q", "HEAD~1");
  scenario("a detached HEAD", detached, GIT);

  // A branch shortened as git shortens it: a tag of the same name.
  const ambiguous = repository(join(root, "ambiguous"), { "a.txt": "a\n" });
  git(ambiguous, "branch", "v1");
  git(ambiguous, "tag", "v1");
  git(ambiguous, "checkout", "-q", "v1");
  scenario("a branch with a tag of the same name", ambiguous, GIT);

  // A worktree (a .git file, a common directory).
  const main = repository(join(root, "main"), { "a.txt": "a\n" });
  git(main, "worktree", "add", "-q", "-b", "side", join(root, "side"));
  write(join(root, "side"), { "side.txt": "side\n", "a.txt": "changed in the worktree\n" });
  scenario("a worktree", join(root, "side"), GIT);
  scenario("the worktree's main repository", main, GIT);

  // No commit yet; intent-to-add; a conflict.
  const unborn = join(root, "unborn");
  mkdirSync(unborn);
  git(unborn, "init", "-q");
  write(unborn, { "a.txt": "a\n", "b.txt": "b\n" });
  git(unborn, "add", "a.txt");
  scenario("no commit yet", unborn, GIT);
  const intent = repository(join(root, "intent"), { "a.txt": "a\n" });
  write(intent, { "n.txt": "new\n" });
  git(intent, "add", "-N", "n.txt");
  scenario("an intent-to-add file", intent, GIT);
  const conflict = repository(join(root, "conflict"), { "a.txt": "base\n", "b.txt": "b\n" });
  git(conflict, "checkout", "-q", "-b", "other");
  write(conflict, { "a.txt": "other\n", "c.txt": "added on other\n" });
  git(conflict, "commit", "-q", "-am", "other");
  git(conflict, "add", "c.txt");
  git(conflict, "commit", "-q", "-m", "c");
  git(conflict, "checkout", "-q", "main");
  write(conflict, { "a.txt": "main\n", "c.txt": "added on main\n" });
  git(conflict, "add", "-A");
  git(conflict, "commit", "-q", "-m", "main");
  try {
    git(conflict, "merge", "-q", "other");
  } catch {
    // the conflict is the point
  }
  scenario("a merge conflict", conflict, GIT);

  // Nested repositories when every untracked file is listed.
  const nestedAll = repository(join(root, "nested-all"), { "a.txt": "a\n" });
  repository(join(nestedAll, "inner"), { "x.txt": "x\n", "y/z.txt": "z\n" });
  mkdirSync(join(nestedAll, "empty-inner"));
  git(join(nestedAll, "empty-inner"), "init", "-q");
  write(nestedAll, { "empty-inner/file.txt": "f\n" });
  git(nestedAll, "config", "status.showUntrackedFiles", "all");
  scenario("nested repositories, every untracked file listed", nestedAll, GIT);

  // A tracked file replaced by a directory; a nested repository; a type change.
  const shapes = repository(join(root, "shapes"), { "f": "file\n", "l.txt": "l\n", "keep.txt": "k\n" });
  rmSync(join(shapes, "f"));
  write(shapes, { "f/inside.txt": "now a directory\n" });
  unlinkSync(join(shapes, "l.txt"));
  symlinkSync("keep.txt", join(shapes, "l.txt"));
  repository(join(shapes, "inner-repo"), { "x.txt": "x\n" });
  mkdirSync(join(shapes, "empty-repo"));
  git(join(shapes, "empty-repo"), "init", "-q");
  scenario("a file become a directory, nested repositories, a type change", shapes, GIT);

  // Staged deletions and additions: exact renames, empty files, small files (no
  // similarity signature), and — not reproduced — one that may pair by similarity.
  const moves = repository(join(root, "moves"), {
    "empty-a": "",
    "small-old.txt": "one line\n",
    "mode-old.sh": "echo same content\n",
  });
  git(moves, "mv", "empty-a", "empty-b");
  git(moves, "rm", "-q", "small-old.txt");
  write(moves, { "small-new.txt": "another short file\nof two lines\n" });
  git(moves, "add", "small-new.txt");
  git(moves, "mv", "mode-old.sh", "mode-new.sh");
  chmodSync(join(moves, "mode-new.sh"), 0o755);
  git(moves, "add", "mode-new.sh");
  scenario("exact renames, an empty file, small files", moves, GIT);

  // Inside .git, a bare repository, a symlinked .gitignore, status.branch, an ignored
  // directory holding a tracked file and untracked ones.
  const odd = repository(join(root, "odd"), { "a.txt": "a\n", "logs/kept.log": "tracked\n", ".gitignore": "logs/\n" });
  write(odd, { "logs/new.log": "untracked, ignored\n", "logs/deeper/x.txt": "ignored\n" });
  scenario("inside .git", join(odd, ".git", "refs"), GIT);
  scenario("an ignored directory holding a tracked file", odd, GIT);
  const bareRepo = join(root, "bare.git");
  git(root, "clone", "-q", "--bare", odd, bareRepo);
  scenario("a bare repository", bareRepo, GIT);
  const linked = repository(join(root, "linked-ignore"), { "a.txt": "a\n", "rules": "*.tmp\n" });
  symlinkSync("rules", join(linked, ".gitignore"));
  scenario("a .gitignore that is a symbolic link", linked, GIT);
  const branchHeader = repository(join(root, "branch-header"), { "a.txt": "a\n" });
  git(branchHeader, "config", "status.branch", "true");
  scenario("status.branch=true", branchHeader, GIT);

  // Not reproduced: a staged deletion beside a different staged addition.
  const inexact = repository(join(root, "inexact"), { "old.txt": "line\n".repeat(50) });
  git(inexact, "mv", "old.txt", "new.txt");
  writeFileSync(join(inexact, "new.txt"), `${"line\n".repeat(50)}one more\n`);
  git(inexact, "add", "new.txt");
  scenario("an inexact rename", inexact, ["git:branch", "git:status"], { tsMissing: ["git:status"] });

  // Submodules: populated (not reproduced), and not populated.
  const library = repository(join(root, "library"), { "lib.txt": "lib\n" });
  const host = repository(join(root, "host"), { "a.txt": "a\n" });
  git(host, "submodule", "add", "-q", library, "sub");
  git(host, "commit", "-q", "-m", "sub");
  scenario("a populated submodule", host, GIT, { tsMissing: ["git:status"] });
  const bare = repository(join(root, "host-2"), { "a.txt": "a\n" });
  git(bare, "submodule", "add", "-q", library, "sub");
  git(bare, "commit", "-q", "-m", "sub");
  git(bare, "submodule", "deinit", "-q", "-f", "sub");
  scenario("a submodule not populated", bare, GIT);

  // Outside the roots: the working directory, and a repository above the roots.
  scenario("a working directory outside the roots", changes, GIT, { roots: [outside] });
  const above = repository(join(root, "above"), { "a.txt": "a\n" });
  mkdirSync(join(above, "inner"));
  scenario("a repository above the roots", join(above, "inner"), GIT);
  const plain = join(root, "plain");
  mkdirSync(plain);
  scenario("not a repository", plain, GIT);

  // Files: Unicode, missing, binary, not UTF-8, BOM and CRLF, a symlink out of the
  // roots, one inside, a directory, an absolute path inside and outside.
  const files = join(root, "files");
  write(files, {
    "AGENTS.md": "Grüße, 世界! 🎉\nSecond line.\n",
    "crlf.md": "\ufeffBOM and CRLF\r\n\r\n",
    "binary.bin": new Uint8Array([0x89, 0x50, 0x00, 0x01]),
    "latin1.txt": new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    "docs/nested.md": "nested\n",
    "big.txt": "x".repeat(1_048_577),
  });
  symlinkSync(join(outside, "secret.txt"), join(files, "escape.md"));
  symlinkSync("AGENTS.md", join(files, "alias.md"));
  scenario("files", files, [
    "file:AGENTS.md",
    "file:crlf.md",
    "file:missing.md",
    "file:binary.bin",
    "file:latin1.txt",
    "file:escape.md",
    "file:alias.md",
    "file:docs",
    "file:docs/nested.md",
    "file:../outside/secret.txt",
    `file:${join(files, "AGENTS.md")}`,
    `file:${join(outside, "secret.txt")}`,
    "file:big.txt",
    "prompt:cwd",
    "system:os",
    "system:hostname",
    "system:nonsense",
    "var:x",
    "prompt:model",
  ]);
  scenario("files with the outside folder as a root too", files, ["file:escape.md", "file:../outside/secret.txt"], {
    roots: [files, outside],
  });
  scenario("a relative cwd spelled with dots", `${files}/docs/..`, ["prompt:cwd", "file:AGENTS.md"]);
}

describe("host-local values equal the Python client's", { skip: !pythonAvailable() && "no .venv/bin/python" }, () => {
  before(() => {
    build();
    python = pythonValues(scenarios.map(({ cwd, roots, keys }) => ({ cwd, roots: roots ?? null, keys })));
  });
  after(() => cleanup(root));

  test("every scenario", async (t) => {
    for (const [index, item] of scenarios.entries()) {
      await t.test(item.name, async () => {
        const ours = await localValues(item.keys, { cwd: item.cwd, roots: item.roots ?? null });
        const theirs = python[index]!;
        const missing = item.tsMissing ?? [];
        const expected = Object.fromEntries(Object.entries(theirs).map(([k, v]) => [k, missing.includes(k) ? null : v]));
        const reasons = await explainLocalValues(item.keys, { cwd: item.cwd, roots: item.roots ?? null });
        const why = [...reasons].filter(([, v]) => v instanceof Missing).map(([k, v]) => `${k}: ${(v as Missing).reason}`);
        assert.deepEqual(ours, expected, `missing here: ${why.join("; ") || "none"}`);
        for (const key of missing) {
          assert.equal(typeof theirs[key], "string", `Python reads ${key} here`);
          const why = (await explainLocalValues([key], { cwd: item.cwd, roots: item.roots ?? null })).get(key);
          assert.ok(why instanceof Missing && /not reproduced|not read here/.test(why.reason), String(why));
        }
      });
    }
  });

  test("the scenarios are not vacuous", () => {
    const first = python[0]!;
    assert.equal(first["git:branch"], "feature/ts");
    assert.match(first["git:status"]!, /^R {2}renamed-from\.txt -> renamed-to\.txt$/m);
    assert.match(first["git:status"]!, /^\?\? "\\346\\227\\245/m);
    const files = python[scenarios.findIndex((s) => s.name === "files")]!;
    assert.equal(files["file:AGENTS.md"], "Grüße, 世界! 🎉\nSecond line.");
    assert.equal(files["file:escape.md"], null);
  });
});
