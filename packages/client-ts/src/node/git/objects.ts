/**
 * git's object database, read-only: loose objects (`objects/xx/…`, zlib), packs
 * (`objects/pack/*.idx` version 2 and their `.pack`, with offset and reference
 * deltas) and alternates. Only what a status needs is read: commits and trees. Every
 * file is opened through {@link GitFiles}; every object is bounded in size, every delta
 * chain in depth.
 */

import * as fs from "node:fs";

import { B, join } from "../paths.js";
import { TooMuch, Unavailable } from "./errors.js";
import type { GitFiles } from "./files.js";
import { inflate } from "./inflate.js";

const MAX_OBJECT_BYTES = 64 * 1_048_576;
const MAX_INDEX_BYTES = 256 * 1_048_576;
const MAX_DELTA_DEPTH = 1000;
const TYPES = ["", "commit", "tree", "blob", "tag"] as const;

export interface GitObject {
  readonly type: string;
  readonly data: Uint8Array;
}

function hexOf(bytes: Uint8Array, start: number): string {
  let out = "";
  for (let i = start; i < start + 20; i++) out += (bytes[i]! < 16 ? "0" : "") + bytes[i]!.toString(16);
  return out;
}

class Pack {
  #index: Buffer | null = null;
  #fd: number | null = null;
  #size = 0;
  readonly #cache = new Map<number, GitObject>();

  constructor(
    readonly files: GitFiles,
    readonly path: string,
  ) {}

  #load(): Buffer {
    if (this.#index === null) {
      const data = this.files.read("pack index", `${this.path}.idx`, MAX_INDEX_BYTES);
      if (data === null || data.length < 1072 || data.readUInt32BE(0) !== 0xff744f63 || data.readUInt32BE(4) !== 2) {
        throw new Unavailable("the repository's pack index cannot be read");
      }
      this.#index = data;
    }
    return this.#index;
  }

  /** The offset of `oid` in the pack, or -1. */
  find(oid: Buffer): number {
    const index = this.#load();
    const first = oid[0]!;
    let low = first === 0 ? 0 : index.readUInt32BE(8 + (first - 1) * 4);
    let high = index.readUInt32BE(8 + first * 4);
    const count = index.readUInt32BE(8 + 255 * 4);
    const names = 8 + 256 * 4;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = index.compare(oid, 0, 20, names + middle * 20, names + middle * 20 + 20) * -1;
      if (order === 0) {
        const offsets = names + count * 24;
        const offset = index.readUInt32BE(offsets + middle * 4);
        if (!(offset & 0x80000000)) return offset;
        const large = offsets + count * 4 + (offset & 0x7fffffff) * 8;
        return index.readUInt32BE(large) * 0x100000000 + index.readUInt32BE(large + 4);
      }
      if (order < 0) high = middle;
      else low = middle + 1;
    }
    return -1;
  }

  #read(offset: number, length: number): Buffer {
    if (this.#fd === null) {
      const fd = this.files.open("pack", `${this.path}.pack`);
      if (fd === null) throw new Unavailable("the repository's pack cannot be read");
      this.#fd = fd;
      this.#size = fs.fstatSync(fd).size;
    }
    const size = Math.max(0, Math.min(length, this.#size - offset));
    const buffer = Buffer.allocUnsafe(size);
    let done = 0;
    while (done < size) {
      const count = fs.readSync(this.#fd, buffer, done, size - done, offset + done);
      if (count === 0) break;
      done += count;
    }
    return buffer.subarray(0, done);
  }

  /** The object at `offset`, its deltas applied. */
  at(offset: number, store: ObjectStore, depth: number): GitObject {
    const cached = this.#cache.get(offset);
    if (cached) return cached;
    if (depth > MAX_DELTA_DEPTH) throw new TooMuch("a delta chain in the repository is too long");
    this.files.tick();
    const head = this.#read(offset, 32);
    let byte = head[0]!;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    let shift = 4;
    let at = 1;
    while (byte & 0x80) {
      byte = head[at++]!;
      size += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    }
    if (size > MAX_OBJECT_BYTES) throw new TooMuch(`an object in the repository is larger than ${MAX_OBJECT_BYTES} bytes`);
    let base: GitObject | null = null;
    if (type === 6) {
      byte = head[at++]!;
      let back = byte & 0x7f;
      while (byte & 0x80) {
        byte = head[at++]!;
        back = (back + 1) * 128 + (byte & 0x7f);
      }
      base = this.at(offset - back, store, depth + 1);
    } else if (type === 7) {
      base = store.read(hexOf(head, at), depth + 1);
      at += 20;
    } else if (!TYPES[type]) {
      throw new Unavailable("the repository's pack holds an object of an unknown type");
    }
    const compressed = this.#read(offset + at, Math.ceil(size * 1.01) + 1024);
    const data = inflate(compressed, size, size);
    const object = base === null ? { type: TYPES[type]!, data } : { type: base.type, data: applyDelta(base.data, data) };
    if (this.#cache.size > 256) this.#cache.clear();
    this.#cache.set(offset, object);
    return object;
  }

  close(): void {
    if (this.#fd !== null) fs.closeSync(this.#fd);
    this.#fd = null;
  }
}

function varint(data: Uint8Array, start: number): [number, number] {
  let value = 0;
  let shift = 0;
  let at = start;
  let byte: number;
  do {
    byte = data[at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

function applyDelta(base: Uint8Array, delta: Uint8Array): Uint8Array {
  const [sourceSize, afterSource] = varint(delta, 0);
  const [targetSize, start] = varint(delta, afterSource);
  if (sourceSize !== base.length) throw new Unavailable("a delta in the repository does not fit its base");
  if (targetSize > MAX_OBJECT_BYTES) throw new TooMuch(`an object in the repository is larger than ${MAX_OBJECT_BYTES} bytes`);
  const out = new Uint8Array(targetSize);
  let at = start;
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) offset += delta[at++]! * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (16 << i)) size += delta[at++]! * 2 ** (8 * i);
      if (size === 0) size = 0x10000;
      if (offset + size > base.length || written + size > targetSize) throw new Unavailable("a corrupt delta");
      out.set(base.subarray(offset, offset + size), written);
      written += size;
    } else if (op) {
      if (at + op > delta.length || written + op > targetSize) throw new Unavailable("a corrupt delta");
      out.set(delta.subarray(at, at + op), written);
      written += op;
      at += op;
    } else {
      throw new Unavailable("a corrupt delta");
    }
  }
  if (written !== targetSize) throw new Unavailable("a corrupt delta");
  return out;
}

/** The objects of a repository: its object directory and, as git follows them, its
 * alternates (each checked by the caller before). */
export class ObjectStore {
  readonly #packs: Pack[] = [];

  constructor(
    readonly files: GitFiles,
    readonly directories: readonly string[],
  ) {
    for (const directory of directories) {
      let names: string[] = [];
      try {
        names = fs
          .readdirSync(B(join(directory, "pack")), { encoding: "buffer" })
          .map((name) => name.toString("latin1"));
      } catch {
        names = [];
      }
      for (const name of names.sort()) {
        if (name.endsWith(".idx") && names.includes(`${name.slice(0, -4)}.pack`)) {
          this.#packs.push(new Pack(files, join(directory, "pack", name.slice(0, -4))));
        }
      }
    }
  }

  /** The object `oid` (hex); throws {@link Unavailable} when it is not there. */
  read(oid: string, depth = 0): GitObject {
    for (const directory of this.directories) {
      const data = this.files.read("object", join(directory, oid.slice(0, 2), oid.slice(2)), MAX_OBJECT_BYTES);
      if (data === null) continue;
      const raw = inflate(data, MAX_OBJECT_BYTES + 64, data.length * 4);
      const space = raw.indexOf(0x20);
      const nul = raw.indexOf(0);
      if (space < 0 || nul < space) throw new Unavailable("the repository holds a corrupt object");
      const type = Buffer.from(raw.subarray(0, space)).toString("latin1");
      return { type, data: raw.subarray(nul + 1) };
    }
    const key = Buffer.from(oid, "hex");
    for (const pack of this.#packs) {
      const offset = pack.find(key);
      if (offset >= 0) return pack.at(offset, this, depth);
    }
    throw new Unavailable(`the repository's object ${oid} is missing`);
  }

  close(): void {
    for (const pack of this.#packs) pack.close();
  }
}

/** The tree of a commit object. */
export function commitTree(commit: GitObject): string {
  if (commit.type !== "commit") throw new Unavailable("HEAD does not name a commit");
  const match = /^tree ([0-9a-f]{40})\n/.exec(Buffer.from(commit.data.subarray(0, 46)).toString("latin1"));
  if (!match) throw new Unavailable("the repository holds a corrupt commit");
  return match[1]!;
}

/** A tree's entries: name (byte string), mode, oid (hex). */
export function treeEntries(tree: GitObject): { name: string; mode: number; oid: string }[] {
  if (tree.type !== "tree") throw new Unavailable("the repository holds a corrupt tree");
  const data = tree.data;
  const entries: { name: string; mode: number; oid: string }[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const nul = data.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > data.length) throw new Unavailable("the repository holds a corrupt tree");
    const mode = parseInt(Buffer.from(data.subarray(at, space)).toString("latin1"), 8);
    const name = Buffer.from(data.subarray(space + 1, nul)).toString("latin1");
    entries.push({ name, mode, oid: hexOf(data, nul + 1) });
    at = nul + 21;
  }
  return entries;
}
