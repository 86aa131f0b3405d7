/**
 * SHA-256, synchronous and dependency-free: the fallback's `sha256` and OpenAI's
 * `prompt_cache_key` are computed where they are needed, in pure functions, on every
 * runtime (`crypto.subtle` is asynchronous, and Node's `crypto` is not on the edge).
 */

import { utf8 } from "./text.js";

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes
// (K) and of the square roots of the first 8 (the initial hash), as FIPS 180-4 defines
// them; computed here rather than spelled out (test/sha256.test.ts checks them).
const K = new Uint32Array(64);
const H0 = new Uint32Array(8);
for (let n = 2, found = 0; found < 64; n++) {
  let prime = true;
  for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
  if (!prime) continue;
  if (found < 8) H0[found] = (Math.sqrt(n) % 1) * 2 ** 32;
  K[found++] = (Math.cbrt(n) % 1) * 2 ** 32;
}

/** The SHA-256 digest of `data`. */
export function sha256Bytes(data: Uint8Array): Uint8Array {
  const length = data.length;
  const blocks = ((length + 9 + 63) >> 6) << 6;
  const buffer = new Uint8Array(blocks);
  buffer.set(data);
  buffer[length] = 0x80;
  const view = new DataView(buffer.buffer);
  view.setUint32(blocks - 8, Math.floor(length / 0x20000000));
  view.setUint32(blocks - 4, (length << 3) >>> 0);
  const h = H0.slice();
  const w = new Uint32Array(64);
  for (let offset = 0; offset < blocks; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let [a, b, c, d, e, f, g, k] = h as unknown as [number, number, number, number, number, number, number, number];
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0]! += a;
    h[1]! += b;
    h[2]! += c;
    h[3]! += d;
    h[4]! += e;
    h[5]! += f;
    h[6]! += g;
    h[7]! += k;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]!);
  return out;
}

/** Lowercase hexadecimal of `bytes`. */
export function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += (byte < 16 ? "0" : "") + byte.toString(16);
  return out;
}

/** The hex SHA-256 of `text`'s UTF-8 bytes, `null` for `null`. */
export function textSha256(text: string | null): string | null {
  return text === null ? null : hex(sha256Bytes(utf8(text)));
}
