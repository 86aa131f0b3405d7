/**
 * `git:status`: `git status --short` (git 2.39) without its last line ending, as the
 * Python core computes it (step 4b of `sysprompt_core.variables.git`), read in pure
 * JavaScript: the index against HEAD's tree (renames: exact ones), the work tree against
 * the index (content compared by object id when the stat data does not settle it),
 * conflicts, intent-to-add entries, untracked files and directories (collapsed as git
 * collapses them, ignore rules honoured), paths relative to the working directory and
 * C-quoted as `core.quotePath` asks.
 *
 * Where the answer depends on what is not reproduced here, the status is missing with
 * the reason, never a guess: inexact renames (a staged deletion beside a staged addition
 * that is not the same object), populated submodules, line-ending or `ident`
 * conversions of a file whose bytes they would change, filter drivers, case-insensitive
 * work trees; and above `maxGitFiles` files or past `gitTimeout`.
 */

import * as fs from "node:fs";

import { B, join, O_NOFOLLOW, O_READ, openedInside, readAtMost, expanduser, text } from "../paths.js";
import { Missing, type Limits, type Value } from "../values.js";
import type { Config } from "./config.js";
import { TooMuch, Unavailable } from "./errors.js";
import { lexists, lstat, outside } from "./files.js";
import { ignoredBy, PatternList } from "./ignore.js";
import { parseIndex, type IndexEntry } from "./index-file.js";
import { commitTree, treeEntries } from "./objects.js";
import { globalFolders, type Repository } from "./repo.js";

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const GITLINK = 0o160000;
const MAX_HASH_BYTES = 256 * 1_048_576;
const CONFLICT: Record<number, string> = { 1: "DD", 2: "AU", 3: "UD", 4: "UA", 5: "DU", 6: "AA", 7: "UU" };
const ATTRIBUTE_DRIVER = /(?:^|\s)(filter|working-tree-encoding)=(\S+)/g;
const CONVERSION = /(?:^|\s)[-!]?(text|eol|crlf|ident)(?:=|\s|$)/m;

interface Settings {
  untracked: "no" | "normal" | "all";
  quoteFully: boolean;
  relative: boolean;
  renames: boolean;
}

function settingsOf(config: Config): Settings {
  const untracked = config.value("status.showUntrackedFiles") || "normal";
  if (untracked !== "no" && untracked !== "normal" && untracked !== "all") {
    throw new Unavailable(`status.showUntrackedFiles is '${untracked}', which git rejects`);
  }
  if (config.bool("status.branch", false)) {
    throw new Unavailable("status.branch=true adds a branch header that is not reproduced");
  }
  const renameKey = config.value("status.renames") ? "status.renames" : "diff.renames";
  const renamesText = (config.value(renameKey) || "true").toLowerCase();
  if (renamesText === "copy" || renamesText === "copies") {
    throw new Unavailable(`${renameKey}=copies asks for copy detection, not reproduced`);
  }
  if (config.int("status.renameLimit") === null) config.int("diff.renameLimit");
  if (config.bool("core.ignoreCase", false)) throw new Unavailable("core.ignoreCase is set, not reproduced here");
  if (!config.bool("core.symlinks", true)) throw new Unavailable("core.symlinks is off, not reproduced here");
  return {
    untracked,
    quoteFully: config.bool("core.quotePath", true),
    relative: config.bool("status.relativePaths", true),
    renames: config.bool(renameKey, true),
  };
}

interface BlobFacts {
  type: number;
  size: number;
  /** At most how many hashes libgit2's similarity signature takes of the blob. */
  chunks: number;
}

/** An upper bound of the runs libgit2's hashsig hashes: each line of L > 0 bytes gives
 * at most ceil(L / 80) (HASHSIG_MAX_RUN). */
function chunkBound(data: Uint8Array): number {
  let chunks = 0;
  let length = 0;
  for (const byte of data) {
    if (byte === 10 || byte === 0) {
      chunks += Math.ceil(length / 80);
      length = 0;
    } else {
      length++;
    }
  }
  return chunks + Math.ceil(length / 80);
}

/** Whether libgit2's rename detection (find_similar, its default hashsig metric)
 * certainly scores the pair 0: different file types, a gitlink, sizes more than eight
 * times apart (both over 127 bytes), or a side too small for a signature (fewer than
 * HASHSIG_HEAP_MIN_SIZE = 4 hashes: GIT_EBUFS, no similarity). */
function unpairable(a: BlobFacts, b: BlobFacts): boolean {
  if (a.type !== b.type || a.type === GITLINK) return true;
  if (a.size > 127 && b.size > 127 && (a.size > b.size * 8 || b.size > a.size * 8)) return true;
  return a.chunks < 4 || b.chunks < 4;
}

class Line {
  index = " ";
  worktree = " ";
  source: string | null = null;
}

/** git's quote_path with QUOTE_PATH_QUOTE_SP (byte strings). */
export function quote(path: string, quoteFully: boolean): string {
  const SHORT: Record<number, string> = { 7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r" };
  let out = "";
  let quoted = false;
  for (let i = 0; i < path.length; i++) {
    const byte = path.charCodeAt(i);
    if (byte === 0x22 || byte === 0x5c) {
      out += `\\${path[i]}`;
      quoted = true;
    } else if (byte < 0x20 || byte === 0x7f || (byte >= 0x80 && quoteFully)) {
      out += `\\${SHORT[byte] ?? byte.toString(8).padStart(3, "0")}`;
      quoted = true;
    } else {
      out += path[i];
    }
  }
  return quoted || path.includes(" ") ? `"${out}"` : out;
}

/** git's relative_path for repository paths (`prefix` ends with `/`). */
export function relativePath(path: string, prefix: string): string {
  if (!path) return "./";
  if (!prefix) return path;
  let i = 0;
  let j = 0;
  let prefixOff = 0;
  let inOff = 0;
  while (i < prefix.length && j < path.length && prefix[i] === path[j]) {
    if (prefix[i] === "/") {
      while (i < prefix.length && prefix[i] === "/") i++;
      while (j < path.length && path[j] === "/") j++;
      prefixOff = i;
      inOff = j;
    } else {
      i++;
      j++;
    }
  }
  if (i >= prefix.length && prefixOff < prefix.length) {
    if (j >= path.length) inOff = path.length;
    else if (path[j] === "/") {
      while (j < path.length && path[j] === "/") j++;
      inOff = j;
    } else i = prefixOff;
  } else if (j >= path.length && inOff < path.length && i < prefix.length && prefix[i] === "/") {
    while (i < prefix.length && prefix[i] === "/") i++;
    inOff = path.length;
  }
  const rest = path.slice(inOff);
  if (i >= prefix.length) return rest || "./";
  let ups = "";
  while (i < prefix.length) {
    if (prefix[i] === "/") {
      ups += "../";
      while (i < prefix.length && prefix[i] === "/") i++;
      continue;
    }
    i++;
  }
  if (!prefix.endsWith("/")) ups += "../";
  return ups + rest;
}

async function blobId(data: Uint8Array): Promise<string> {
  const header = Buffer.from(`blob ${data.length}\0`, "latin1");
  const digest = await crypto.subtle.digest("SHA-1", new Uint8Array(Buffer.concat([header, data])));
  return Buffer.from(digest).toString("hex");
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One status read of an opened repository's work tree. */
class StatusReader {
  readonly changes = new Map<string, Line>();
  readonly untracked: string[] = [];
  readonly tracked = new Set<string>(); // every index path, all stages
  readonly trackedDirs = new Set<string>();
  readonly stages = new Map<string, number>();
  readonly intentToAdd = new Set<string>();
  readonly unchanged = new Set<string>();
  readonly gitlinks = new Map<string, string>();
  readonly entries = new Map<string, IndexEntry>(); // stage 0
  readonly deleted: string[] = [];
  readonly workdir: string;
  readonly settings: Settings;
  counted = 0;
  hashed = 0;
  conversions = false;
  #operations = 0;
  #indexMtime = 0n;
  #fileMode: boolean;
  #attributeFiles: string[] = [];
  #ignoreFiles: string[] = [];
  #fixedLists: PatternList[] = [];

  constructor(
    readonly repo: Repository,
    readonly limits: Limits,
  ) {
    this.workdir = repo.workdir!;
    this.settings = settingsOf(repo.config);
    this.#fileMode = repo.config.bool("core.fileMode", true);
  }

  line(path: string): Line {
    let found = this.changes.get(path);
    if (!found) {
      found = new Line();
      this.changes.set(path, found);
    }
    return found;
  }

  count(n = 1): void {
    this.counted += n;
    if (this.counted > this.limits.maxGitFiles) {
      throw new TooMuch(`the repository has more than ${this.limits.maxGitFiles} files (maxGitFiles); git:status is not read`);
    }
  }

  async pause(): Promise<void> {
    if (++this.#operations % 256 === 0) {
      this.repo.files.tick();
      await tick();
    }
  }

  /** The core's `_confine_status_files`. */
  confineStatusFiles(): void {
    const config = this.repo.config;
    const files = this.repo.files;
    for (const key of ["core.excludesFile", "core.attributesFile"]) {
      const value = config.value(key);
      if (value) files.checkInside(key, expanduser(value));
    }
    for (const folder of new Set([this.repo.gitdir, this.repo.common])) {
      for (const [what, name] of [
        ["exclude file", "exclude"],
        ["attributes file", "attributes"],
      ] as const) {
        const path = join(folder, "info", name);
        if (lexists(path)) files.checkInside(what, path);
      }
    }
  }

  async readIndex(): Promise<void> {
    const path = join(this.repo.gitdir, "index");
    const data = this.repo.files.read("index", path, 1 << 30);
    if (data === null) return;
    this.#indexMtime = fs.statSync(B(path), { bigint: true }).mtimeNs;
    const entries = await parseIndex(data, this.limits.maxGitFiles);
    this.count(entries.length);
    for (const entry of entries) {
      this.tracked.add(entry.path);
      for (let slash = entry.path.indexOf("/"); slash >= 0; slash = entry.path.indexOf("/", slash + 1)) {
        this.trackedDirs.add(entry.path.slice(0, slash));
      }
      if (entry.stage) {
        this.stages.set(entry.path, (this.stages.get(entry.path) ?? 0) | (1 << (entry.stage - 1)));
        continue;
      }
      this.entries.set(entry.path, entry);
      if (entry.intentToAdd) this.intentToAdd.add(entry.path);
      if (entry.skipWorktree || entry.assumeValid) this.unchanged.add(entry.path);
      if ((entry.mode & S_IFMT) === GITLINK) this.gitlinks.set(entry.path, entry.oid);
      if (entry.path === ".gitattributes" || entry.path.endsWith("/.gitattributes")) this.#attributeFiles.push(entry.path);
      if (entry.path === ".gitignore" || entry.path.endsWith("/.gitignore")) this.#ignoreFiles.push(entry.path);
    }
  }

  /** HEAD's tree as path → [mode, oid], or `null` on an unborn branch. */
  headTree(): Map<string, [number, string]> | null {
    const head = this.repo.head();
    if ("unborn" in head) return null;
    const oid = "detached" in head ? head.detached : head.oid;
    const objects = this.repo.objects;
    const flat = new Map<string, [number, string]>();
    const walk = (treeOid: string, prefix: string): void => {
      this.repo.files.tick();
      for (const entry of treeEntries(objects.read(treeOid))) {
        const path = prefix + entry.name;
        if ((entry.mode & S_IFMT) === S_IFDIR) {
          walk(entry.oid, `${path}/`);
        } else {
          this.count();
          flat.set(path, [entry.mode, entry.oid]);
        }
      }
    };
    walk(commitTree(objects.read(oid)), "");
    return flat;
  }

  /** The index against HEAD. */
  staged(tree: Map<string, [number, string]> | null): void {
    if (tree === null) {
      for (const path of this.entries.keys()) if (!this.intentToAdd.has(path)) this.line(path).index = "A";
      return;
    }
    const added: string[] = [];
    const deleted: string[] = [];
    const retyped: string[] = [];
    for (const [path, entry] of this.entries) {
      if (this.intentToAdd.has(path)) continue;
      const old = tree.get(path);
      if (!old) {
        added.push(path);
      } else if (old[1] !== entry.oid || old[0] !== entry.mode) {
        if ((old[0] & S_IFMT) !== (entry.mode & S_IFMT)) retyped.push(path);
        else this.line(path).index = "M";
      }
    }
    for (const path of tree.keys()) {
      if (!this.entries.has(path) && !this.stages.has(path)) deleted.push(path);
    }
    for (const path of retyped) this.line(path).index = "T";
    if (!this.settings.renames || added.length === 0 || (deleted.length === 0 && retyped.length === 0)) {
      for (const path of added) this.line(path).index = "A";
      for (const path of deleted) this.line(path).index = "D";
      return;
    }
    if (retyped.length > 0) {
      throw new Unavailable("a staged type change beside a staged addition may be shown as a rename, not reproduced");
    }
    // Exact renames (the same object and file type, one source for one target), and
    // additions and deletions that libgit2's similarity could not pair (see #unpairable).
    const typeOf = (mode: number): number => mode & S_IFMT;
    const bySource = new Map<string, string[]>();
    for (const path of deleted) {
      const [mode, oid] = tree.get(path)!;
      const key = `${typeOf(mode)} ${oid}`;
      bySource.set(key, [...(bySource.get(key) ?? []), path]);
    }
    const byTarget = new Map<string, string[]>();
    for (const path of added) {
      const entry = this.entries.get(path)!;
      const key = `${typeOf(entry.mode)} ${entry.oid}`;
      byTarget.set(key, [...(byTarget.get(key) ?? []), path]);
    }
    const leftAdded: string[] = [];
    const paired = new Set<string>();
    for (const path of added) {
      const entry = this.entries.get(path)!;
      const key = `${typeOf(entry.mode)} ${entry.oid}`;
      const sources = bySource.get(key);
      if (!sources) {
        leftAdded.push(path);
        continue;
      }
      if (sources.length !== 1 || byTarget.get(key)!.length !== 1) {
        throw new Unavailable("staged renames between files of the same content are ambiguous, not reproduced");
      }
      const line = this.line(path);
      line.index = "R";
      line.source = sources[0]!;
      paired.add(sources[0]!);
    }
    const leftDeleted = deleted.filter((path) => !paired.has(path));
    if (leftAdded.length > 0 && leftDeleted.length > 0) {
      if (leftAdded.length * leftDeleted.length > 10_000) {
        throw new Unavailable("many staged deletions beside staged additions may hold renames, not reproduced");
      }
      const targets = leftAdded.map((path) => this.#blobFacts(this.entries.get(path)!.mode, this.entries.get(path)!.oid));
      for (const path of leftDeleted) {
        const [mode, oid] = tree.get(path)!;
        const source = this.#blobFacts(mode, oid);
        if (targets.some((target) => !unpairable(source, target))) {
          throw new Unavailable(
            "a staged deletion beside a staged addition may be a rename git finds by similarity, not reproduced",
          );
        }
      }
    }
    for (const path of leftAdded) this.line(path).index = "A";
    for (const path of leftDeleted) this.line(path).index = "D";
  }

  #blobFacts(mode: number, oid: string): BlobFacts {
    if ((mode & S_IFMT) === GITLINK) return { type: GITLINK, size: 0, chunks: 0 };
    const blob = this.repo.objects.read(oid);
    return { type: mode & S_IFMT, size: blob.data.length, chunks: chunkBound(blob.data) };
  }

  /** Patterns of a directory's `.gitignore` (a byte string path from the top; `""` the top). */
  #ignoreList(dir: string): PatternList | null {
    const path = join(this.workdir, dir ? `${dir}/.gitignore` : ".gitignore");
    const info = lstat(path);
    if (info === null) return null;
    if (info.isSymbolicLink()) {
      throw new Unavailable(
        `${text(dir ? `${dir}/.gitignore` : ".gitignore")} is a symbolic link, which git does not follow (git 2.32 and later); not reproduced`,
      );
    }
    if (!info.isFile()) return null;
    const data = this.#readWorktree(dir ? `${dir}/.gitignore` : ".gitignore", 1 << 20);
    return data === null ? null : new PatternList(data.toString("latin1"), dir);
  }

  loadFixedLists(): void {
    const lists: PatternList[] = [];
    const files = this.repo.files;
    const exclude = files.read("exclude file", join(this.repo.gitdir, "info", "exclude"), 1 << 20);
    if (exclude !== null) lists.push(new PatternList(exclude.toString("latin1"), ""));
    const configured = this.repo.config.value("core.excludesFile");
    let excludes: string | null = configured ? expanduser(configured) : null;
    if (excludes === null) {
      const xdg = globalFolders(files.roots).find((folder) => folder.ignore);
      if (xdg) excludes = join(xdg.path, xdg.ignore!);
    }
    if (excludes !== null) {
      const data = files.read("core.excludesFile", excludes, 1 << 20);
      if (data !== null) lists.push(new PatternList(data.toString("latin1"), ""));
    }
    this.#fixedLists = lists;
  }

  #ignored(lists: readonly PatternList[], path: string, dir: boolean): boolean {
    return ignoredBy([...lists, ...this.#fixedLists], path, dir) === true;
  }

  #readdir(dir: string): fs.Dirent<Buffer>[] {
    try {
      return fs.readdirSync(B(join(this.workdir, dir)), { withFileTypes: true, encoding: "buffer" });
    } catch {
      return [];
    }
  }

  #kind(dir: string, entry: fs.Dirent<Buffer>, name: string): "dir" | "file" | "other" {
    if (entry.isDirectory()) return "dir";
    if (entry.isFile() || entry.isSymbolicLink()) return "file";
    if (entry.isBlockDevice() || entry.isCharacterDevice() || entry.isFIFO() || entry.isSocket()) return "other";
    const info = lstat(join(this.workdir, dir ? `${dir}/${name}` : name));
    if (info?.isDirectory()) return "dir";
    return info?.isFile() || info?.isSymbolicLink() ? "file" : "other";
  }

  /** Untracked files and directories below `dir`, with the ignore lists that apply
   * there (deepest first); `ignored`: `dir` is ignored (all below it is). */
  async walk(dir: string, lists: readonly PatternList[], ignored: boolean): Promise<void> {
    const own = ignored ? null : this.#ignoreList(dir);
    const here = own ? [own, ...lists] : lists;
    for (const entry of this.#readdir(dir)) {
      await this.pause();
      this.count();
      const name = entry.name.toString("latin1");
      if (name === ".git") continue;
      const path = dir ? `${dir}/${name}` : name;
      if (this.gitlinks.has(path)) continue;
      const kind = this.#kind(dir, entry, name);
      if (kind === "file" && this.tracked.has(path)) continue;
      if (kind === "dir") {
        if (this.trackedDirs.has(path)) {
          await this.walk(path, here, ignored || this.#ignored(here, path, true));
          continue;
        }
        if (ignored || this.#ignored(here, path, true)) continue;
        // A nested repository is listed whole, never entered (libgit2 hides it, as
        // any directory, when nothing but .git and ignored files is in it).
        if (this.settings.untracked === "all" && !lexists(join(this.workdir, `${path}/.git`))) {
          await this.walk(path, here, false);
        } else if (await this.#holdsUntracked(path, here)) {
          this.untracked.push(`${path}/`);
        }
      } else if (kind === "file") {
        if (!ignored && !this.#ignored(here, path, false)) this.untracked.push(path);
      }
    }
  }

  async #holdsUntracked(dir: string, lists: readonly PatternList[]): Promise<boolean> {
    const own = this.#ignoreList(dir);
    const here = own ? [own, ...lists] : lists;
    for (const entry of this.#readdir(dir)) {
      await this.pause();
      this.count();
      const name = entry.name.toString("latin1");
      if (name === ".git") continue;
      const path = `${dir}/${name}`;
      const kind = this.#kind(dir, entry, name);
      if (kind === "dir") {
        if (!this.#ignored(here, path, true) && (await this.#holdsUntracked(path, here))) return true;
      } else if (kind === "file") {
        if (!this.#ignored(here, path, false)) return true;
      }
    }
    return false;
  }

  /** The core's `_check_drivers` and `_check_ignore_files`, and whether line-ending or
   * ident conversions may apply to a file whose content is compared. */
  checkAttributes(): void {
    const config = this.repo.config;
    const names = new Set([".gitattributes", ...this.#attributeFiles]);
    const special = this.untracked;
    for (const path of special) if (path.endsWith(".gitattributes")) names.add(path);
    const paths = [...names].sort().map((name) => join(this.workdir, name));
    paths.push(join(this.repo.gitdir, "info", "attributes"));
    const globalFile = config.value("core.attributesFile");
    if (globalFile) paths.push(expanduser(globalFile));
    for (const path of paths) {
      let data: Buffer | null;
      try {
        data = this.repo.files.read("attributes file", path, 1 << 20);
      } catch (error) {
        if (error instanceof TooMuch || (error instanceof Unavailable && error.message.includes("outside"))) throw error;
        continue;
      }
      if (data === null) continue;
      const content = data.toString("latin1");
      for (const match of content.matchAll(ATTRIBUTE_DRIVER)) {
        const name = Buffer.from(match[2]!, "latin1").toString("utf8");
        if (match[1] === "working-tree-encoding") {
          throw new Unavailable("the repository's attributes use working-tree-encoding, not reproduced");
        }
        if (["clean", "process"].some((key) => config.value(`filter.${name}.${key}`))) {
          throw new Unavailable(
            `the repository's attributes use the filter driver '${name}', whose command git: variables never run`,
          );
        }
      }
      if (CONVERSION.test(content)) this.conversions = true;
    }
    const autocrlf = (config.value("core.autocrlf") ?? "false").toLowerCase();
    if (["true", "yes", "on", "1", "input"].includes(autocrlf)) this.conversions = true;
    const ignores = new Set([".gitignore", ...this.#ignoreFiles]);
    for (const path of special) if (path.endsWith(".gitignore")) ignores.add(path);
    for (const path of [...ignores].sort()) {
      if (lstat(join(this.workdir, path))?.isSymbolicLink()) {
        throw new Unavailable(
          `${text(path)} is a symbolic link, which git does not follow (git 2.32 and later); not reproduced`,
        );
      }
    }
  }

  #readWorktree(path: string, limit: number): Buffer | null {
    const full = join(this.workdir, path);
    let fd: number;
    try {
      fd = fs.openSync(B(full), O_READ | O_NOFOLLOW);
    } catch {
      return null;
    }
    try {
      if (!openedInside(fd, full, this.repo.files.roots)) throw outside("work tree file", full);
      const info = fs.fstatSync(fd);
      if (info.size > limit) throw new TooMuch(`a file of the work tree is larger than ${limit} bytes`);
      return readAtMost(fd, limit);
    } finally {
      fs.closeSync(fd);
    }
  }

  #leadingOk = new Map<string, boolean>();

  /** Whether every leading directory of `path` is a real directory (not a symlink). */
  #leadingDirs(path: string): boolean {
    const slash = path.lastIndexOf("/");
    if (slash < 0) return true;
    const dir = path.slice(0, slash);
    const known = this.#leadingOk.get(dir);
    if (known !== undefined) return known;
    const ok = this.#leadingDirs(dir) && (lstat(join(this.workdir, dir))?.isDirectory() ?? false);
    this.#leadingOk.set(dir, ok);
    return ok;
  }

  /** The work tree against the index. */
  async worktree(): Promise<void> {
    for (const [path, entry] of this.entries) {
      if (this.stages.has(path) || this.intentToAdd.has(path) || this.gitlinks.has(path) || this.unchanged.has(path)) {
        continue;
      }
      await this.pause();
      const full = join(this.workdir, path);
      const info = this.#leadingDirs(path) ? lstatBig(full) : null;
      if (info === null || info.isDirectory()) {
        this.line(path).worktree = "D";
        this.deleted.push(path);
        continue;
      }
      const type = entry.mode & S_IFMT;
      if (info.isSymbolicLink() !== (type === S_IFLNK) || !(info.isFile() || info.isSymbolicLink())) {
        if (!info.isFile() && !info.isSymbolicLink()) {
          throw new Unavailable(`${text(path)} is neither a file nor a symbolic link, not reproduced`);
        }
        this.line(path).worktree = "T";
        continue;
      }
      if (type === S_IFREG && this.#fileMode) {
        const executable = (Number(info.mode) & 0o100) !== 0;
        if (executable !== ((entry.mode & 0o777) === 0o755)) {
          this.line(path).worktree = "M";
          continue;
        }
      }
      if (await this.#contentChanged(path, entry, info)) this.line(path).worktree = "M";
    }
  }

  async #contentChanged(path: string, entry: IndexEntry, info: fs.BigIntStats): Promise<boolean> {
    const size = Number(info.size % 0x100000000n);
    if (!this.conversions && entry.size !== 0 && entry.size !== size) return true;
    const mtimeS = Number(info.mtimeNs / 1_000_000_000n) >>> 0;
    const mtimeNs = Number(info.mtimeNs % 1_000_000_000n);
    const ctimeS = Number(info.ctimeNs / 1_000_000_000n) >>> 0;
    const ctimeNs = Number(info.ctimeNs % 1_000_000_000n);
    const racy = BigInt(entry.mtimeS) * 1_000_000_000n + BigInt(entry.mtimeNs) >= this.#indexMtime;
    if (
      !racy &&
      entry.size === size &&
      entry.mtimeS === mtimeS &&
      entry.mtimeNs === mtimeNs &&
      entry.ctimeS === ctimeS &&
      entry.ctimeNs === ctimeNs &&
      entry.ino === Number(info.ino % 0x100000000n)
    ) {
      return false;
    }
    let data: Buffer;
    if (info.isSymbolicLink()) {
      data = fs.readlinkSync(B(join(this.workdir, path)), { encoding: "buffer" });
    } else {
      const read = this.#readWorktree(path, MAX_HASH_BYTES);
      if (read === null) return true;
      data = read;
      if (this.conversions && (data.includes(13) || data.includes("$Id"))) {
        throw new Unavailable(`line-ending or ident conversions may apply to ${text(path)}, not reproduced`);
      }
    }
    this.hashed += data.length;
    if (this.hashed > MAX_HASH_BYTES) throw new TooMuch(`git:status would hash more than ${MAX_HASH_BYTES} bytes`);
    return (await blobId(data)) !== entry.oid;
  }

  /** Intent-to-add entries, submodules and conflicts (the end of the core's `_collect`). */
  finish(): void {
    for (const path of this.intentToAdd) {
      const exists = lexists(join(this.workdir, path));
      this.line(path).worktree = exists ? "A" : "D";
      if (!exists) this.deleted.push(path);
    }
    if (this.settings.renames && this.intentToAdd.size > 0 && this.deleted.length > 0) {
      throw new Unavailable(
        "intent-to-add files beside deleted ones may be shown as renames by git, which is not reproduced",
      );
    }
    for (const path of this.gitlinks.keys()) {
      if (this.unchanged.has(path)) continue;
      const char = this.#submodule(path);
      if (char) this.line(path).worktree = char;
    }
    for (const [path, mask] of this.stages) {
      const line = this.line(path);
      const code = CONFLICT[mask]!;
      line.index = code[0]!;
      line.worktree = code[1]!;
      line.source = null;
    }
  }

  #submodule(path: string): string {
    if (this.#submoduleIgnore(path) === "all") return "";
    const top = join(this.workdir, path);
    const info = lstat(top);
    if (info === null) return "D";
    if (info.isSymbolicLink() || !info.isDirectory()) return "T";
    if (!lexists(join(top, ".git"))) return "";
    throw new Unavailable(`submodule ${text(path)} is populated; its state is not read here`);
  }

  #submoduleIgnore(path: string): string {
    const data = lstat(join(this.workdir, ".gitmodules"))?.isFile() ? this.#readWorktree(".gitmodules", 1 << 20) : null;
    const values = new Map<string, string | null>();
    if (data !== null) {
      try {
        const modules = new (this.repo.config.constructor as typeof Config)();
        modules.add(data.toString("latin1"));
        for (const [key, value] of modules.entries()) values.set(key, value);
      } catch {
        values.clear();
      }
    }
    let name: string | null = null;
    for (const [key, value] of values) {
      if (key.startsWith("submodule.") && key.endsWith(".path") && value === path) {
        name = key.slice(10, -5);
        break;
      }
    }
    if (name === null) return "none";
    const key = `submodule.${name}.ignore`;
    return this.repo.config.value(key) || values.get(key) || "none";
  }

  /** The core's `read_status`: the lines, sorted, relative and quoted. */
  format(directory: string): Value {
    const limit = this.limits.maxFileBytes;
    let prefix = "";
    if (this.settings.relative && directory !== this.workdir && directory.startsWith(`${this.workdir}/`)) {
      prefix = `${directory.slice(this.workdir.length + 1)}/`;
    }
    const show = (path: string): string => quote(relativePath(path, prefix), this.settings.quoteFully);
    const lines: string[] = [];
    let size = 0;
    const tooLarge = new Missing(`the git status is larger than the ${limit}-byte limit (max_file_bytes)`);
    for (const path of [...this.changes.keys()].sort()) {
      const entry = this.changes.get(path)!;
      if (entry.index === " " && entry.worktree === " ") continue;
      let line = `${entry.index}${entry.worktree} `;
      if (entry.source !== null) line += `${show(entry.source)} -> `;
      lines.push(line + show(path));
      size += lines[lines.length - 1]!.length + 1;
      if (size > limit + 1) return tooLarge;
    }
    for (const path of [...this.untracked].sort()) {
      lines.push(`?? ${show(path)}`);
      size += lines[lines.length - 1]!.length + 1;
      if (size > limit + 1) return tooLarge;
    }
    const output = lines.join("\n");
    if (output.length > limit) return tooLarge;
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(output, "latin1"));
    } catch {
      return new Missing("the git status is not UTF-8 (a file name is not, and core.quotePath is off)");
    }
  }
}

function lstatBig(path: string): fs.BigIntStats | null {
  try {
    return fs.lstatSync(B(path), { bigint: true });
  } catch {
    return null;
  }
}

/** `git:status` of an opened repository, for the working directory `directory` (real). */
export async function readStatus(repo: Repository, directory: string, limits: Limits): Promise<Value> {
  if (repo.workdir === null) return new Missing("the repository has no work tree here (it is bare, or this is .git)");
  const reader = new StatusReader(repo, limits);
  reader.confineStatusFiles();
  await reader.readIndex();
  reader.staged(reader.headTree());
  reader.loadFixedLists();
  if (reader.settings.untracked !== "no") await reader.walk("", [], false);
  reader.checkAttributes();
  await reader.worktree();
  reader.finish();
  return reader.format(directory);
}

