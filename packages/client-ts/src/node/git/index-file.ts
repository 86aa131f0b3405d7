/**
 * git's index file (versions 2, 3 and 4, SHA-1): its entries with their stat data,
 * modes, object ids, stages and flags. Its checksum is verified. A split index or sparse
 * directory entries are not read (the status is then unavailable).
 */

import { TooMuch, Unavailable } from "./errors.js";

export interface IndexEntry {
  readonly path: string; // byte string
  readonly mode: number;
  readonly oid: string;
  readonly stage: number;
  readonly assumeValid: boolean;
  readonly skipWorktree: boolean;
  readonly intentToAdd: boolean;
  readonly ctimeS: number;
  readonly ctimeNs: number;
  readonly mtimeS: number;
  readonly mtimeNs: number;
  readonly ino: number;
  readonly size: number;
}

const CORRUPT = "the repository's index cannot be read";

export async function parseIndex(data: Buffer, maxEntries: number): Promise<IndexEntry[]> {
  if (data.length < 32 || data.toString("latin1", 0, 4) !== "DIRC") throw new Unavailable(CORRUPT);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", new Uint8Array(data.subarray(0, data.length - 20))));
  if (Buffer.compare(Buffer.from(digest), data.subarray(data.length - 20)) !== 0) throw new Unavailable(CORRUPT);
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) throw new Unavailable(`the repository's index has version ${version}, not read`);
  const count = data.readUInt32BE(8);
  if (count > maxEntries) throw new TooMuch(`the repository has more than ${maxEntries} files in its index (maxGitFiles)`);
  const end = data.length - 20;
  const entries: IndexEntry[] = [];
  let at = 12;
  let previous = "";
  for (let n = 0; n < count; n++) {
    if (at + 62 > end) throw new Unavailable(CORRUPT);
    const flags = data.readUInt16BE(at + 60);
    let extended = 0;
    let pathStart = at + 62;
    if (flags & 0x4000) {
      if (version < 3) throw new Unavailable(CORRUPT);
      extended = data.readUInt16BE(at + 62);
      pathStart += 2;
    }
    let path: string;
    let next: number;
    if (version === 4) {
      let i = pathStart;
      let byte = data[i++]!;
      let strip = byte & 0x7f;
      while (byte & 0x80 && i < end) {
        byte = data[i++]!;
        strip = (strip + 1) * 128 + (byte & 0x7f);
      }
      const nul = data.indexOf(0, i);
      if (nul < 0 || nul >= end || strip > previous.length) throw new Unavailable(CORRUPT);
      path = previous.slice(0, previous.length - strip) + data.toString("latin1", i, nul);
      next = nul + 1;
    } else {
      const nul = data.indexOf(0, pathStart);
      if (nul < 0 || nul >= end) throw new Unavailable(CORRUPT);
      path = data.toString("latin1", pathStart, nul);
      next = at + ((pathStart - at + (nul - pathStart) + 8) & ~7);
    }
    if (extended & 0x8000) throw new Unavailable(CORRUPT);
    entries.push({
      path,
      mode: data.readUInt32BE(at + 24),
      oid: data.toString("hex", at + 40, at + 60),
      stage: (flags >> 12) & 3,
      assumeValid: (flags & 0x8000) !== 0,
      skipWorktree: (extended & 0x4000) !== 0,
      intentToAdd: (extended & 0x2000) !== 0,
      ctimeS: data.readUInt32BE(at),
      ctimeNs: data.readUInt32BE(at + 4),
      mtimeS: data.readUInt32BE(at + 8),
      mtimeNs: data.readUInt32BE(at + 12),
      ino: data.readUInt32BE(at + 20),
      size: data.readUInt32BE(at + 36),
    });
    previous = path;
    at = next;
  }
  while (at + 8 <= end) {
    const signature = data.toString("latin1", at, at + 4);
    const size = data.readUInt32BE(at + 4);
    if (signature === "link") throw new Unavailable("the repository's index is split (core.splitIndex), not read");
    if (signature === "sdir") throw new Unavailable("the repository's index is sparse (index.sparse), not read");
    at += 8 + size;
  }
  return entries;
}
