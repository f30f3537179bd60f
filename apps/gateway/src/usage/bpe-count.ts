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
export const O200K_SPLIT = new RegExp(
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
  if (isAscii(text)) return countAscii(ranks, text);
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

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/*
 * ASCII text, the common prompt, split without the regex. The split regex's
 * Unicode property classes cost ~0.3 µs per character in V8's irregexp (most
 * of a short prompt's estimate). Over ASCII its classes are: letters A-Z
 * (upper) and a-z (lower), digits 0-9, whitespace \t \n \v \f \r and space
 * (JavaScript's \s), and everything else "other". Each piece below is the
 * match the regex's alternatives give, tried in their order at the same
 * position (o200kAsciiPieces is tested against the regex piece for piece).
 */
const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
const SPACE = 8;
const NEWLINE = 16;
const OTHER = 32;
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c += 1) {
  if (c >= 0x41 && c <= 0x5a) ASCII_CLASS[c] = UPPER;
  else if (c >= 0x61 && c <= 0x7a) ASCII_CLASS[c] = LOWER;
  else if (c >= 0x30 && c <= 0x39) ASCII_CLASS[c] = DIGIT;
  else if (c === 0x0a || c === 0x0d) ASCII_CLASS[c] = SPACE | NEWLINE;
  else if ((c >= 0x09 && c <= 0x0d) || c === 0x20) ASCII_CLASS[c] = SPACE;
  else ASCII_CLASS[c] = OTHER;
}

function classAt(text: string, i: number): number {
  return i < text.length ? (ASCII_CLASS[text.charCodeAt(i)] as number) : 0;
}

/** The end of the contraction `'s|'d|'m|'t|'ll|'ve|'re` (either case) at `i`, or `i`. */
function contractionEnd(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2;
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) return i + 3;
  return i;
}

/** The end of the regex's piece of ASCII text starting at `i` (< text.length). */
export function asciiPieceEnd(text: string, i: number): number {
  const first = classAt(text, i);
  // [^\r\n\p{L}\p{N}]? then upper* lower+, or upper+ lower*, then a contraction.
  const letters = (first & (SPACE | OTHER)) !== 0 && (first & NEWLINE) === 0 ? i + 1 : i;
  let j = letters;
  while (classAt(text, j) === UPPER) j += 1;
  while (classAt(text, j) === LOWER) j += 1;
  // Over ASCII, upper and lower never overlap: no backtracking finds another match.
  if (j > letters) return contractionEnd(text, j);
  // \p{N}{1,3}
  if (first === DIGIT) {
    j = i + 1;
    while (j < i + 3 && classAt(text, j) === DIGIT) j += 1;
    return j;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
  j = text.charCodeAt(i) === 0x20 ? i + 1 : i;
  if (classAt(text, j) === OTHER) {
    while (classAt(text, j) === OTHER) j += 1;
    for (let c = text.charCodeAt(j); c === 0x0a || c === 0x0d || c === 0x2f; c = text.charCodeAt(j)) j += 1;
    return j;
  }
  // Whitespace from here: \s*[\r\n]+ (up to the run's last newline), \s+(?!\S), \s+.
  let end = i;
  let lastNewline = -1;
  for (let c = classAt(text, end); c & SPACE; c = classAt(text, end)) {
    if (c & NEWLINE) lastNewline = end;
    end += 1;
  }
  if (lastNewline !== -1) return lastNewline + 1;
  if (end === text.length || end - 1 === i) return end;
  return end - 1;
}

/** The pieces the split regex makes of ASCII text (for tests). */
export function o200kAsciiPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; ) {
    const end = asciiPieceEnd(text, i);
    pieces.push(text.slice(i, end));
    i = end;
  }
  return pieces;
}

function countAscii(r: Ranks, text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; ) {
    const end = asciiPieceEnd(text, i);
    const length = end - i;
    if (length === 1) count += 1;
    else {
      const s = scratchFor(length);
      const piece = s.piece;
      for (let k = 0; k < length; k += 1) piece[k] = text.charCodeAt(i + k);
      count += rankOf(r, piece, 0, length) !== -1 ? 1 : mergedCount(r, piece, length, s);
    }
    i = end;
  }
  return count;
}
