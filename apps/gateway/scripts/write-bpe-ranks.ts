import { writeFileSync } from 'node:fs';
import bpe from 'gpt-tokenizer/bpeRanks/o200k_base';
import { BPE_MAGIC, BPE_RANKS_FILE } from '../src/usage/bpe-count';

/**
 * Writes data/o200k_base.bpe (read by src/usage/bpe-count.ts) from
 * gpt-tokenizer's o200k_base ranks: "BPE1", the rank count (u32 LE), one
 * length byte per rank, then every rank's bytes in rank order. Run after
 * upgrading gpt-tokenizer: `npm run bpe-ranks -w @platform/gateway`;
 * test/bpe-count.test.ts fails while the file and the library disagree.
 */
export function bpeRanksFileOf(ranks: ReadonlyArray<string | readonly number[]>): Buffer {
  const encoder = new TextEncoder();
  const tokens = ranks.map((t) => (typeof t === 'string' ? encoder.encode(t) : Uint8Array.from(t)));
  const header = Buffer.alloc(8);
  header.writeUInt32LE(BPE_MAGIC, 0);
  header.writeUInt32LE(tokens.length, 4);
  const lengths = Buffer.from(
    tokens.map((t, rank) => {
      if (t.length === 0 || t.length > 255) throw new Error(`rank ${rank}: ${t.length} bytes`);
      return t.length;
    }),
  );
  return Buffer.concat([header, lengths, ...tokens]);
}

if (require.main === module) {
  writeFileSync(BPE_RANKS_FILE, bpeRanksFileOf(bpe));
  console.log(`wrote ${BPE_RANKS_FILE} (${bpe.length} ranks)`);
}
