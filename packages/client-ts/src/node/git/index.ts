/**
 * `git:` values on the host: `branch` and `status`, every other name unknown (as in the
 * Python core). The repository is found, confined and read in this process, in pure
 * JavaScript; nothing is started, and nothing a repository names is run.
 */

import { Missing, type Resolution, type Value } from "../values.js";
import { Unavailable } from "./errors.js";
import { GitFiles, isDir } from "./files.js";
import { findRepository, readBranch, type Repository } from "./repo.js";
import { readStatus } from "./status.js";

const NAMES = new Set(["branch", "status"]);

function describe(error: unknown): Missing {
  if (error instanceof Unavailable) return new Missing(error.message);
  const message = error instanceof Error ? error.message : String(error);
  return new Missing(`the repository cannot be read: ${message}`);
}

/** The values of the `git:` names (without the type), for the resolution's directory. */
export async function readGit(names: readonly string[], resolution: Resolution): Promise<Map<string, Value>> {
  const values = new Map<string, Value>();
  const known = names.filter((name) => NAMES.has(name));
  for (const name of names) if (!NAMES.has(name)) values.set(name, new Missing("unknown variable"));
  if (known.length === 0) return values;
  const directory = resolution.directory;
  if (!isDir(directory)) {
    for (const name of known) values.set(name, new Missing("the working directory is not a directory"));
    return values;
  }
  const files = new GitFiles(resolution.roots.length ? resolution.roots : [directory], resolution.limits.gitTimeout);
  let repo: Repository;
  try {
    repo = findRepository(directory, files);
  } catch (error) {
    for (const name of known) values.set(name, describe(error));
    return values;
  }
  try {
    for (const name of known) {
      try {
        values.set(name, name === "branch" ? readBranch(repo) : await readStatus(repo, directory, resolution.limits));
      } catch (error) {
        values.set(name, describe(error));
      }
    }
  } finally {
    repo.close();
  }
  return values;
}
