/**
 * zlib inflate (RFC 1950 around RFC 1951), synchronous and bounded: git's objects are
 * zlib streams, and the node entry may use nothing but `fs` and `path` (no `node:zlib`).
 * The output may not exceed `limit` bytes; a corrupt stream throws.
 */

class Tree {
  readonly counts = new Uint16Array(16);
  readonly symbols = new Uint16Array(288);
}

function build(tree: Tree, lengths: Uint8Array, offset: number, count: number): void {
  tree.counts.fill(0);
  for (let i = 0; i < count; i++) tree.counts[lengths[offset + i]!]!++;
  tree.counts[0] = 0;
  const offsets = new Uint16Array(16);
  for (let i = 0, sum = 0; i < 16; i++) {
    offsets[i] = sum;
    sum += tree.counts[i]!;
  }
  for (let i = 0; i < count; i++) {
    const length = lengths[offset + i]!;
    if (length) tree.symbols[offsets[length]!++] = i;
  }
}

const LENGTH_BASE = new Uint16Array(30);
const LENGTH_BITS = new Uint8Array(30);
const DIST_BASE = new Uint16Array(30);
const DIST_BITS = new Uint8Array(30);
const CLEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

function bases(bits: Uint8Array, base: Uint16Array, delta: number, first: number): void {
  for (let i = 0; i < delta; i++) bits[i] = 0;
  for (let i = 0; i < 30 - delta; i++) bits[i + delta] = Math.floor(i / delta);
  for (let i = 0, sum = first; i < 30; i++) {
    base[i] = sum;
    sum += 1 << bits[i]!;
  }
}
bases(LENGTH_BITS, LENGTH_BASE, 4, 3);
bases(DIST_BITS, DIST_BASE, 2, 1);
LENGTH_BITS[28] = 0;
LENGTH_BASE[28] = 258;

const FIXED_LENGTHS = new Tree();
const FIXED_DISTANCES = new Tree();
{
  const lengths = new Uint8Array(288);
  lengths.fill(8, 0, 144);
  lengths.fill(9, 144, 256);
  lengths.fill(7, 256, 280);
  lengths.fill(8, 280, 288);
  build(FIXED_LENGTHS, lengths, 0, 288);
  build(FIXED_DISTANCES, new Uint8Array(30).fill(5), 0, 30);
}

class Inflater {
  position = 0;
  bitBuffer = 0;
  bitCount = 0;
  output: Uint8Array;
  size = 0;

  constructor(
    readonly input: Uint8Array,
    readonly limit: number,
    expected: number,
  ) {
    this.output = new Uint8Array(Math.max(64, Math.min(expected, limit)));
  }

  bit(): number {
    if (this.bitCount === 0) {
      if (this.position >= this.input.length) throw new Error("truncated zlib stream");
      this.bitBuffer = this.input[this.position++]!;
      this.bitCount = 8;
    }
    const bit = this.bitBuffer & 1;
    this.bitBuffer >>>= 1;
    this.bitCount--;
    return bit;
  }

  bits(count: number, base: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) value |= this.bit() << i;
    return value + base;
  }

  symbol(tree: Tree): number {
    let sum = 0;
    let cur = 0;
    let length = 0;
    do {
      cur = 2 * cur + this.bit();
      if (++length > 15) throw new Error("invalid Huffman code");
      sum += tree.counts[length]!;
      cur -= tree.counts[length]!;
    } while (cur >= 0);
    return tree.symbols[sum + cur]!;
  }

  push(byte: number): void {
    if (this.size >= this.output.length) this.grow(this.size + 1);
    this.output[this.size++] = byte;
  }

  grow(needed: number): void {
    if (needed > this.limit) throw new RangeError(`an object is larger than ${this.limit} bytes`);
    const next = new Uint8Array(Math.min(this.limit, Math.max(needed, this.output.length * 2)));
    next.set(this.output.subarray(0, this.size));
    this.output = next;
  }

  dynamicTrees(lengths: Tree, distances: Tree): void {
    const hlit = this.bits(5, 257);
    const hdist = this.bits(5, 1);
    const hclen = this.bits(4, 4);
    const codeLengths = new Uint8Array(320);
    for (let i = 0; i < hclen; i++) codeLengths[CLEN_ORDER[i]!] = this.bits(3, 0);
    const codeTree = new Tree();
    build(codeTree, codeLengths, 0, 19);
    codeLengths.fill(0);
    for (let n = 0; n < hlit + hdist; ) {
      const sym = this.symbol(codeTree);
      if (sym < 16) {
        codeLengths[n++] = sym;
        continue;
      }
      let repeat: number;
      let value = 0;
      if (sym === 16) {
        if (n === 0) throw new Error("invalid code lengths");
        value = codeLengths[n - 1]!;
        repeat = this.bits(2, 3);
      } else if (sym === 17) repeat = this.bits(3, 3);
      else repeat = this.bits(7, 11);
      if (n + repeat > hlit + hdist) throw new Error("invalid code lengths");
      while (repeat--) codeLengths[n++] = value;
    }
    build(lengths, codeLengths, 0, hlit);
    build(distances, codeLengths, hlit, hdist);
  }

  block(lengths: Tree, distances: Tree): void {
    for (;;) {
      const sym = this.symbol(lengths);
      if (sym === 256) return;
      if (sym < 256) {
        this.push(sym);
        continue;
      }
      const index = sym - 257;
      if (index >= 29) throw new Error("invalid length symbol");
      const length = this.bits(LENGTH_BITS[index]!, LENGTH_BASE[index]!);
      const dist = this.symbol(distances);
      if (dist >= 30) throw new Error("invalid distance symbol");
      const offset = this.bits(DIST_BITS[dist]!, DIST_BASE[dist]!);
      if (offset > this.size) throw new Error("invalid distance");
      if (this.size + length > this.output.length) this.grow(this.size + length);
      const out = this.output;
      for (let i = 0; i < length; i++, this.size++) out[this.size] = out[this.size - offset]!;
    }
  }

  stored(): void {
    this.bitCount = 0;
    if (this.position + 4 > this.input.length) throw new Error("truncated zlib stream");
    const input = this.input;
    const length = input[this.position]! | (input[this.position + 1]! << 8);
    const inverse = input[this.position + 2]! | (input[this.position + 3]! << 8);
    if (length !== (~inverse & 0xffff)) throw new Error("invalid stored block");
    this.position += 4;
    if (this.position + length > input.length) throw new Error("truncated zlib stream");
    if (this.size + length > this.output.length) this.grow(this.size + length);
    this.output.set(input.subarray(this.position, this.position + length), this.size);
    this.size += length;
    this.position += length;
  }
}

/** The bytes of the zlib stream `input` (at most `limit`; `expected` sizes the first
 * buffer). Throws on a corrupt or truncated stream, or one past the limit. */
export function inflate(input: Uint8Array, limit: number, expected = 0): Uint8Array {
  if (input.length < 2 || (input[0]! & 0x0f) !== 8 || ((input[0]! << 8) | input[1]!) % 31 !== 0 || input[1]! & 0x20) {
    throw new Error("not a zlib stream");
  }
  const state = new Inflater(input, limit, expected);
  state.position = 2;
  const dynamicLengths = new Tree();
  const dynamicDistances = new Tree();
  let last: number;
  do {
    last = state.bit();
    const type = state.bits(2, 0);
    if (type === 0) state.stored();
    else if (type === 1) state.block(FIXED_LENGTHS, FIXED_DISTANCES);
    else if (type === 2) {
      state.dynamicTrees(dynamicLengths, dynamicDistances);
      state.block(dynamicLengths, dynamicDistances);
    } else throw new Error("invalid block type");
  } while (!last);
  const output = state.output.subarray(0, state.size);
  const at = state.position;
  if (at + 4 <= input.length) {
    let a = 1;
    let b = 0;
    for (let i = 0; i < output.length; i++) {
      a = (a + output[i]!) % 65521;
      b = (b + a) % 65521;
    }
    const stored = ((input[at]! << 24) | (input[at + 1]! << 16) | (input[at + 2]! << 8) | input[at + 3]!) >>> 0;
    if (stored !== ((b << 16) | a) >>> 0) throw new Error("zlib checksum mismatch");
  }
  return output;
}
