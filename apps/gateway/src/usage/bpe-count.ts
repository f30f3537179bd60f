import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Token counts of OpenAI's o200k_base encoding without gpt-tokenizer's
 * in-memory vocabulary. The library keeps its 199,998 ranks as JavaScript
 * strings in a Map (~20 MB of heap, ~45 MB of RSS, and ~1 s to parse its 2.4 MB
 * source at start). Here the ranks are one file (data/o200k_base.bpe, 1.6 MB:
 * a header, each rank's length, then every rank's bytes; written from
 * gpt-tokenizer's ranks by scripts/write-bpe-ranks.ts) read into one Buffer,
 * with an open-addressing table of typed arrays (~3 MB in all, built in tens
 * of ms on first use). The count is the same BPE: the same split regex, a
 * piece that is one token counts 1, else its UTF-8 bytes are merged pair by
 * pair, lowest rank first (leftmost on ties), as gpt-tokenizer and tiktoken
 * do. Special tokens (`<|endoftext|>`...) count as the text they are: an
 * estimate of a prompt, never a refusal (the library throws on them).
 */

const CONTRACTION = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
/** o200k_base's pre-tokenizer (tiktoken's pattern, as gpt-tokenizer spells it). */
const O200K_SPLIT = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  'gu',
);

export const BPE_RANKS_FILE = path.join(__dirname, '..', '..', 'data', 'o200k_base.bpe');
/** "BPE1", then the rank count (u32 LE), then one length byte per rank, then the bytes. */
export const BPE_MAGIC = 0x31455042;

type Ranks = {
  bytes: Buffer;
  /** Rank r's bytes are bytes[start[r] .. start[r + 1]). */
  start: Uint32Array;
  /** Open addressing: rank + 1 at the slot of its bytes' hash (0: empty). */
  table: Int32Array;
  mask: number;
};

let ranks: Ranks | undefined;

/** FNV-1a over bytes[from, to). */
function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i += 1) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

/** Reads a ranks file (BPE_RANKS_FILE by default) and builds its lookup table. */
export function loadBpeRanks(file = BPE_RANKS_FILE): Ranks {
  const data = readFileSync(file);
  if (data.readUInt32LE(0) !== BPE_MAGIC) throw new Error(`${file}: not a BPE ranks file`);
  const count = data.readUInt32LE(4);
  const lengths = data.subarray(8, 8 + count);
  const bytes = data.subarray(8 + count);
  const start = new Uint32Array(count + 1);
  for (let r = 0; r < count; r += 1) start[r + 1] = (start[r] as number) + (lengths[r] as number);
  if (start[count] !== bytes.length) throw new Error(`${file}: lengths and bytes disagree`);
  let size = 1;
  while (size < count * 2) size *= 2;
  const table = new Int32Array(size);
  const mask = size - 1;
  for (let r = 0; r < count; r += 1) {
    let slot = hashOf(bytes, start[r] as number, start[r + 1] as number) & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = r + 1;
  }
  return { bytes, start, table, mask };
}

/** The rank of piece[from, to), or -1. */
function rankOf(r: Ranks, piece: Uint8Array, from: number, to: number): number {
  const length = to - from;
  let slot = hashOf(piece, from, to) & r.mask;
  for (;;) {
    const entry = r.table[slot] as number;
    if (entry === 0) return -1;
    const rank = entry - 1;
    const at = r.start[rank] as number;
    if ((r.start[rank + 1] as number) - at === length) {
      let same = true;
      for (let i = 0; i < length; i += 1)
        if (r.bytes[at + i] !== piece[from + i]) {
          same = false;
          break;
        }
      if (same) return rank;
    }
    slot = (slot + 1) & r.mask;
  }
}

/** Scratch space of the merge, grown to the longest piece seen. */
let scratch = { piece: new Uint8Array(256), starts: new Int32Array(257), pairRanks: new Float64Array(257) };

function scratchFor(bytes: number): typeof scratch {
  if (scratch.piece.length < bytes) {
    const size = Math.max(bytes, scratch.piece.length * 2);
    scratch = {
      piece: new Uint8Array(size),
      starts: new Int32Array(size + 1),
      pairRanks: new Float64Array(size + 1),
    };
  }
  return scratch;
}

/** Tokens of one piece of UTF-8 bytes (length ≥ 2, not itself a token): BPE merges, lowest rank first. */
function mergedCount(r: Ranks, piece: Uint8Array, length: number, s: typeof scratch): number {
  const { starts, pairRanks } = s;
  // Parts are piece[starts[i], starts[i + 1]); pairRanks[i] ranks parts i and i + 1 merged.
  const pairRank = (i: number, parts: number): number =>
    i + 2 > parts ? Infinity : rankOrInfinity(r, piece, starts[i] as number, starts[i + 2] as number);
  let parts = length;
  for (let i = 0; i <= length; i += 1) starts[i] = i;
  for (let i = 0; i < parts; i += 1) pairRanks[i] = pairRank(i, parts);
  while (parts > 1) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < parts - 1; i += 1)
      if ((pairRanks[i] as number) < lowest) {
        lowest = pairRanks[i] as number;
        at = i;
      }
    if (at === -1) break;
    // Parts at and at + 1 become one: drop the boundary at + 1.
    starts.copyWithin(at + 1, at + 2, parts + 1);
    pairRanks.copyWithin(at + 1, at + 2, parts + 1);
    parts -= 1;
    pairRanks[at] = pairRank(at, parts);
    if (at > 0) pairRanks[at - 1] = pairRank(at - 1, parts);
  }
  return parts;
}

function rankOrInfinity(r: Ranks, piece: Uint8Array, from: number, to: number): number {
  const rank = rankOf(r, piece, from, to);
  return rank === -1 ? Infinity : rank;
}

/** o200k_base tokens of a text. Loads the ranks on first use. */
export function countO200kTokens(text: string): number {
  if (ranks === undefined) ranks = loadBpeRanks();
  const r = ranks;
  let count = 0;
  for (const [match] of text.matchAll(O200K_SPLIT)) {
    // At most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units).
    const s = scratchFor(match.length * 3);
    const { written } = textEncoder.encodeInto(match, s.piece);
    if (written === 1 || rankOf(r, s.piece, 0, written) !== -1) count += 1;
    else count += mergedCount(r, s.piece, written, s);
  }
  return count;
}

const textEncoder = new TextEncoder();
