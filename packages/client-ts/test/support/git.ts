/** Real git repositories in temporary folders, made with the git CLI (the tests start
 * git; the library never does). */

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", ...args], {
    cwd,
    env: ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A fresh temporary folder (its real path); removed by {@link cleanup}. */
export function temporary(prefix = "sysprompt-ts-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function cleanup(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
}

/** Writes `files` (path → text or bytes) below `root`, making folders. */
export function write(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** A repository at `path` with `files` committed on `main`. */
export function repository(path: string, files: Record<string, string | Uint8Array>): string {
  mkdirSync(path, { recursive: true });
  git(path, "init", "-q");
  write(path, files);
  git(path, "add", "-A");
  git(path, "commit", "-q", "-m", "first");
  return path;
}
