/**
 * Every file a git read opens goes through here: opened, then checked **as opened**
 * (the descriptor's path, {@link openedInside}) against the allowed roots, bounded in
 * size, and counted against the read's deadline. Names are byte strings (see `paths`).
 */

import * as fs from "node:fs";

import { B, insideAny, O_READ, openedInside, readAtMost, realpath, text } from "../paths.js";
import { TooMuch, Unavailable } from "./errors.js";

export class GitFiles {
  readonly #deadline: number;

  constructor(
    readonly roots: readonly string[],
    readonly timeout: number,
  ) {
    this.#deadline = performance.now() + timeout * 1000;
  }

  /** Throws when the read's time is up. */
  tick(): void {
    if (performance.now() > this.#deadline) throw new TooMuch(`git timed out after ${this.timeout}s`);
  }

  /** The core's `_check_inside`: the real path of `path`, which must lie in the roots. */
  checkInside(what: string, path: string): string {
    const real = realpath(path);
    if (!insideAny(real, this.roots)) throw outside(what, real);
    return real;
  }

  /** The bytes of the file `path` (at most `limit`), `null` when it does not exist;
   * throws {@link Unavailable} when what was opened lies outside the roots. */
  read(what: string, path: string, limit: number): Buffer | null {
    this.tick();
    let fd: number;
    try {
      fd = fs.openSync(B(path), O_READ);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw new Unavailable(`the repository's ${what} ${text(path)} cannot be read`);
    }
    try {
      if (!openedInside(fd, path, this.roots)) throw outside(what, realpath(path));
      const info = fs.fstatSync(fd);
      if (!info.isFile()) throw new Unavailable(`the repository's ${what} ${text(path)} is not a regular file`);
      if (info.size > limit) throw new TooMuch(`the repository's ${what} is larger than ${limit} bytes`);
      return readAtMost(fd, limit);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** An open descriptor on `path` (checked as for {@link read}), or `null`. */
  open(what: string, path: string): number | null {
    this.tick();
    let fd: number;
    try {
      fd = fs.openSync(B(path), O_READ);
    } catch {
      return null;
    }
    if (!openedInside(fd, path, this.roots)) {
      fs.closeSync(fd);
      throw outside(what, realpath(path));
    }
    return fd;
  }
}

export function outside(what: string, path: string): Unavailable {
  return new Unavailable(`the repository's ${what} ${text(path)} is outside the allowed roots`);
}

export function lstat(path: string): fs.Stats | null {
  try {
    return fs.lstatSync(B(path));
  } catch {
    return null;
  }
}

export function stat(path: string): fs.Stats | null {
  try {
    return fs.statSync(B(path));
  } catch {
    return null;
  }
}

export const isDir = (path: string): boolean => stat(path)?.isDirectory() ?? false;
export const isFile = (path: string): boolean => stat(path)?.isFile() ?? false;
export const isLink = (path: string): boolean => lstat(path)?.isSymbolicLink() ?? false;
export const lexists = (path: string): boolean => lstat(path) !== null;
