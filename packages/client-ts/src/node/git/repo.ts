/**
 * Finding and confining a repository, its configuration, its references and HEAD — the
 * Python core's steps 1, 2 and 4a (`sysprompt_core.variables.git`), in pure JavaScript.
 *
 * 1. **Find**: from the working directory's real path up to the allowed root that holds
 *    it, stopping at a filesystem boundary: a `.git` directory, a `.git` file
 *    (`gitdir:`, worktrees and submodules) or a git directory itself (bare, or inside
 *    `.git`: no work tree).
 * 2. **Confine**: the `.git` file's target, the git directory, its common directory, its
 *    config, index, HEAD, refs, packed refs, objects and alternates must lie inside the
 *    roots — and every file read is checked again as opened.
 * 4a. **The branch**: `git rev-parse --abbrev-ref HEAD` — `HEAD` when detached, missing
 *    on an unborn branch, shortened as unambiguously as git shortens it.
 */

import * as fs from "node:fs";

import { B, dirname, expanduser, insideAny, join, realpath, text } from "../paths.js";
import { Config } from "./config.js";
import { Unavailable } from "./errors.js";
import { GitFiles, isDir, isFile, isLink, lexists, lstat } from "./files.js";
import { ObjectStore } from "./objects.js";

const REV_PARSE_RULES = ["{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD"];
const SMALL = 65536;

function readSmall(files: GitFiles, what: string, path: string, limit = SMALL): string | null {
  const data = files.read(what, path, 1 << 30);
  return data === null ? null : data.subarray(0, limit).toString("latin1");
}

function decodeUtf8(value: string, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(value, "latin1")) && value;
  } catch {
    throw new Unavailable(`the ${what} cannot be read`);
  }
}

function gitfileTarget(files: GitFiles, path: string): string {
  files.checkInside(".git file", path);
  let content: string | null;
  try {
    content = readSmall(files, ".git file", path);
  } catch (error) {
    if (error instanceof Unavailable && error.message.includes("outside")) throw error;
    content = null;
  }
  if (content === null) throw new Unavailable(`the .git file ${text(path)} cannot be read`);
  decodeUtf8(content, `.git file ${text(path)}`);
  if (!content.startsWith("gitdir: ")) throw new Unavailable(`the .git file ${text(path)} is not a valid gitfile`);
  const target = content.slice(8).replace(/[\r\n\t ]+$/, "");
  return join(dirname(path), target);
}

function commonDir(files: GitFiles, gitdir: string): string {
  const marker = join(gitdir, "commondir");
  if (!lexists(marker)) return gitdir;
  const content = readSmall(files, "commondir file", marker);
  if (content === null) throw new Unavailable(`the commondir file of ${text(gitdir)} cannot be read`);
  decodeUtf8(content, `commondir file of ${text(gitdir)}`);
  return files.checkInside("common directory", join(gitdir, content.replace(/[\r\n]+$/, "")));
}

function isGitDirectory(files: GitFiles, path: string): boolean {
  const common = commonDir(files, path);
  if (!(isDir(join(common, "objects")) && isDir(join(common, "refs")))) return false;
  const head = join(path, "HEAD");
  if (isLink(head)) return fs.readlinkSync(B(head), { encoding: "buffer" }).toString("latin1").startsWith("refs/");
  let content: string | null;
  try {
    content = readSmall(files, "HEAD", head, 256);
  } catch {
    return false;
  }
  if (content === null) return false;
  if (content.startsWith("ref:")) return content.slice(4).replace(/^[ \t]+/, "").startsWith("refs/");
  return /^[0-9a-f]{40}(?:[0-9a-f]{24})?\s*$/.test(content);
}

function confineObjects(files: GitFiles, objects: string, depth: number, found: string[]): void {
  const real = files.checkInside(depth === 0 ? "object directory" : "object alternate", objects);
  found.push(real);
  const alternates = join(real, "info", "alternates");
  if (!lexists(alternates)) return;
  files.checkInside("alternates file", alternates);
  if (depth >= 5) return;
  const content = readSmall(files, "alternates file", alternates);
  if (content === null) throw new Unavailable("the repository's alternates file cannot be read");
  for (let line of content.split(/\r?\n/)) {
    line = line.trim();
    if (line && !line.startsWith("#")) confineObjects(files, join(real, line), depth + 1, found);
  }
}

/** A confined, opened repository. */
export class Repository {
  readonly config = new Config();
  readonly objects: ObjectStore;

  constructor(
    readonly files: GitFiles,
    readonly gitdir: string,
    readonly common: string,
    readonly workdir: string | null,
    objectDirs: readonly string[],
  ) {
    this.objects = new ObjectStore(files, objectDirs);
  }

  close(): void {
    this.objects.close();
  }

  /** The global configuration levels libgit2 reads for the core: `~/.gitconfig` and
   * `$XDG_CONFIG_HOME/git/` only where they lie inside the roots; then the repository's. */
  loadConfig(): void {
    for (const folder of globalFolders(this.files.roots)) {
      const data = this.files.read("config", join(folder.path, folder.config), 1 << 20);
      if (data !== null) this.config.add(data.toString("latin1"));
    }
    const local = this.files.read("config", join(this.common, "config"), 1 << 20);
    if (local !== null) this.config.add(local.toString("latin1"));
    if (this.config.bool("extensions.worktreeConfig", false)) {
      const worktree = this.files.read("config", join(this.gitdir, "config.worktree"), 1 << 20);
      if (worktree !== null) this.config.add(worktree.toString("latin1"));
    }
    if (this.config.includes) {
      throw new Unavailable("the repository's configuration includes other files (include.path), not read here");
    }
    const format = this.config.value("extensions.objectFormat");
    if (format && format.toLowerCase() !== "sha1") throw new Unavailable(`the repository uses ${format} object ids, not read here`);
    const refs = this.config.value("extensions.refStorage");
    if (refs && refs.toLowerCase() !== "files") throw new Unavailable(`the repository stores its references as ${refs}, not read here`);
  }

  /** The file of a reference (per-worktree ones in the git directory). */
  #refFile(name: string): string {
    const perWorktree = !name.startsWith("refs/") || /^refs\/(bisect|worktree|rewritten)\//.test(name);
    return join(perWorktree ? this.gitdir : this.common, name);
  }

  #packed: Map<string, string> | null = null;

  #packedRefs(): Map<string, string> {
    if (this.#packed === null) {
      this.#packed = new Map();
      const content = readSmall(this.files, "packed refs", join(this.common, "packed-refs"), 1 << 30);
      for (const line of (content ?? "").split("\n")) {
        const match = /^([0-9a-f]{40}) (.+?)\r?$/.exec(line);
        if (match) this.#packed.set(match[2]!, match[1]!);
      }
    }
    return this.#packed;
  }

  /** A reference's direct content: `{target}` (symbolic), `{oid}`, or `null` (none). */
  readRef(name: string): { target?: string; oid?: string } | null {
    const path = this.#refFile(name);
    const info = lstat(path);
    if (info?.isSymbolicLink() && name === "HEAD") {
      const link = fs.readlinkSync(B(path), { encoding: "buffer" }).toString("latin1");
      return link.startsWith("refs/") ? { target: link } : null;
    }
    if (info?.isFile()) {
      const content = readSmall(this.files, "reference", path, 4096);
      if (content !== null) {
        const trimmed = content.replace(/\s+$/, "");
        if (trimmed.startsWith("ref:")) return { target: trimmed.slice(4).replace(/^\s+/, "") };
        if (/^[0-9a-f]{40}$/.test(trimmed)) return { oid: trimmed };
        return null;
      }
    } else if (info?.isDirectory()) {
      return null;
    }
    const packed = name.startsWith("refs/") ? this.#packedRefs().get(name) : undefined;
    return packed ? { oid: packed } : null;
  }

  /** Follows symbolic references: the final name and oid, or `null` (does not resolve). */
  resolve(name: string): { name: string; oid: string } | null {
    let current = name;
    for (let depth = 0; depth < 5; depth++) {
      const ref = this.readRef(current);
      if (ref === null) return null;
      if (ref.oid) return { name: current, oid: ref.oid };
      current = ref.target!;
    }
    return null;
  }

  #exists(name: string): boolean {
    if (!name.startsWith("refs/") && !/^[A-Z_]+$/.test(name)) return false; // libgit2 refuses the name
    return this.resolve(name) !== null;
  }

  /** git's shorten_unambiguous_ref. */
  shorten(refname: string, strict: boolean): string {
    for (let index = REV_PARSE_RULES.length - 1; index > 0; index--) {
      const [prefix, suffix] = REV_PARSE_RULES[index]!.split("{}") as [string, string];
      if (!(refname.startsWith(prefix) && refname.endsWith(suffix) && refname.length > prefix.length + suffix.length)) {
        continue;
      }
      const short = refname.slice(prefix.length, refname.length - suffix.length);
      const checked = strict ? REV_PARSE_RULES.length : index;
      let ambiguous = false;
      for (let other = 0; other < checked && !ambiguous; other++) {
        if (other !== index && this.#exists(REV_PARSE_RULES[other]!.replace("{}", short))) ambiguous = true;
      }
      if (!ambiguous) return short;
    }
    return refname;
  }

  /** HEAD: detached (its oid), on a branch (the resolved name and oid), or unborn (the
   * branch name). */
  head(): { detached: string } | { name: string; oid: string } | { unborn: string } {
    const ref = this.readRef("HEAD");
    if (ref === null) throw new Unavailable("the repository's HEAD cannot be read");
    if (ref.oid) return { detached: ref.oid };
    const resolved = this.resolve("HEAD");
    if (resolved === null) return { unborn: ref.target! };
    return resolved;
  }
}

/** The global configuration folders inside the roots (the core's `_search_paths`). */
export function globalFolders(roots: readonly string[]): { path: string; config: string; ignore?: string }[] {
  const home = expanduser("~");
  if (!home.startsWith("/")) return [];
  const xdgEnv = process.env["XDG_CONFIG_HOME"];
  const xdg = xdgEnv ? Buffer.from(xdgEnv, "utf8").toString("latin1") : join(home, ".config");
  const levels = [
    { path: home, config: ".gitconfig", files: [".gitconfig"] },
    { path: join(xdg, "git"), config: "config", ignore: "ignore", files: ["config", "ignore", "attributes"] },
  ];
  const found: { path: string; config: string; ignore?: string }[] = [];
  for (const level of levels) {
    if (!level.path.startsWith("/")) continue;
    const paths = [level.path, ...level.files.map((name) => join(level.path, name))];
    if (paths.every((path) => !lexists(path) || insideAny(realpath(path), roots))) {
      found.push({ path: realpath(level.path), config: level.config, ...(level.ignore ? { ignore: level.ignore } : {}) });
    }
  }
  return found;
}

function confineGitdir(files: GitFiles, gitdir: string): { real: string; common: string; objects: string[] } {
  const real = files.checkInside("git directory", gitdir);
  const common = commonDir(files, real);
  for (const [what, path] of [
    ["config", join(real, "config")],
    ["config", join(common, "config")],
    ["index", join(real, "index")],
    ["HEAD", join(real, "HEAD")],
    ["refs directory", join(common, "refs")],
    ["packed refs", join(common, "packed-refs")],
  ] as const) {
    if (lexists(path)) files.checkInside(what, path);
  }
  const objects: string[] = [];
  confineObjects(files, join(common, "objects"), 0, objects);
  return { real, common, objects };
}

function open(files: GitFiles, gitdir: string, workdir: string | null): Repository {
  const confined = confineGitdir(files, gitdir);
  const repo = new Repository(files, confined.real, confined.common, workdir, confined.objects);
  try {
    repo.loadConfig();
    if (repo.config.value("core.worktree") !== null) {
      throw new Unavailable("the repository sets core.worktree, not read here");
    }
    if (workdir !== null && repo.config.bool("core.bare", false)) {
      return new Repository(files, confined.real, confined.common, null, confined.objects);
    }
  } catch (error) {
    repo.close();
    throw error;
  }
  return repo;
}

function rootOf(directory: string, roots: readonly string[]): string | null {
  const holding = roots.filter((root) => directory === root || directory.startsWith(`${root.replace(/\/+$/, "")}/`));
  return holding.length ? holding.reduce((a, b) => (b.length > a.length ? b : a)) : null;
}

/** The confined repository holding `directory` (a real path); throws {@link Unavailable}. */
export function findRepository(directory: string, files: GitFiles): Repository {
  const roots = files.roots;
  const root = rootOf(directory, roots);
  if (root === null) throw new Unavailable("the working directory is outside the allowed roots");
  let current = directory;
  const device = fs.statSync(B(current)).dev;
  for (;;) {
    files.tick();
    const dotgit = join(current, ".git");
    let gitdir: string | null = null;
    if (isFile(dotgit) || (isLink(dotgit) && !isDir(dotgit))) {
      gitdir = gitfileTarget(files, dotgit);
      files.checkInside("git directory", gitdir);
      if (!isGitDirectory(files, gitdir)) throw new Unavailable(`the .git file ${text(dotgit)} names no git directory`);
    } else if (isDir(dotgit)) {
      files.checkInside("git directory", dotgit);
      if (isGitDirectory(files, dotgit)) gitdir = dotgit;
    }
    if (gitdir !== null) return open(files, gitdir, realpath(current));
    if (isGitDirectory(files, current)) return open(files, current, null);
    const parent = dirname(current);
    if (current === root || parent === current) throw new Unavailable("not a git repository");
    let parentDevice: number;
    try {
      parentDevice = fs.statSync(B(parent)).dev;
    } catch {
      throw new Unavailable("not a git repository");
    }
    if (parentDevice !== device) throw new Unavailable("not a git repository");
    current = parent;
  }
}

/** `git:branch` of an opened repository. */
export function readBranch(repo: Repository): string {
  const head = repo.head();
  if ("detached" in head) return "HEAD";
  if ("unborn" in head) {
    const name = head.unborn.startsWith("refs/heads/") ? head.unborn.slice(11) : head.unborn;
    throw new Unavailable(`the branch ${text(name)} has no commits yet (git rev-parse fails there)`);
  }
  const strict = repo.config.bool("core.warnAmbiguousRefs", true);
  return repo.shorten(head.name, strict).trim();
}
