import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { type FileHandle, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { LedgerRecord } from './record';

/**
 * The ledger's last resort: a local file of records (one JSON line each,
 * fsynced before the append resolves) for when neither Redis nor Postgres
 * takes a record. Bounded (`maxBytes` per process; past it the append
 * fails and the answer is not completed). Replayed into Postgres when it is
 * back: a file is claimed by renaming it, so two processes never replay the
 * same one, and records are inserted ON CONFLICT DO NOTHING, so a replay
 * cut short and repeated counts nothing twice.
 */
export type LedgerSpool = {
  append(record: LedgerRecord): Promise<void>;
  /** Bytes this process has spooled and not yet replayed. */
  bytes(): number;
  /**
   * Inserts every spooled record it can claim (this process's, and those
   * of processes gone for `orphanMs`), deleting each file once its records
   * are in. Throws (keeping the file) when the insert fails.
   */
  replay(insert: (records: LedgerRecord[]) => Promise<unknown>): Promise<number>;
  close(): Promise<void>;
};

/**
 * The records of a spool file. A line torn by a crash mid-append is
 * skipped: its append never resolved, so its answer was not completed.
 */
function parseLines(text: string): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    try {
      out.push(JSON.parse(line) as LedgerRecord);
    } catch {
      // torn line
    }
  }
  return out;
}

const ACTIVE = 'spool-';
const CLAIMED = 'replay-';

// Over 80 lines: its closures share the open spool file and its size.
export function createLedgerSpool(opts: { dir: string; maxBytes: number; orphanMs?: number }): LedgerSpool {
  const orphanMs = opts.orphanMs ?? 60_000;
  const tag = () => `${process.pid}-${Date.now()}-${randomBytes(4).toString('hex')}`;
  let file: { name: string; handle: FileHandle } | null = null;
  // Spooled by this process: in the active file, and in its rotated files not yet replayed.
  let bytes = 0;
  // Appends and the rotation before a replay run one at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => {});
    return run;
  };

  const rotate = async (): Promise<void> => {
    if (!file) return;
    const { name, handle } = file;
    file = null;
    await handle.close();
    await rename(path.join(opts.dir, name), path.join(opts.dir, `${CLAIMED}${tag()}.jsonl`));
  };

  /** The files this process may replay: its own rotated ones, and other processes' left for orphanMs. */
  const claim = async (): Promise<{ full: string; mine: boolean }[]> => {
    const claimed: { full: string; mine: boolean }[] = [];
    // No folder yet: nothing was ever spooled here.
    for (const name of await readdir(opts.dir).catch(() => [] as string[])) {
      if (!name.endsWith('.jsonl') || name === file?.name) continue;
      const full = path.join(opts.dir, name);
      const mine = name.startsWith(`${CLAIMED}${process.pid}-`);
      if (!mine) {
        const age = Date.now() - (await stat(full).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
        if (age < orphanMs) continue;
      }
      const to = path.join(opts.dir, `${CLAIMED}${tag()}.jsonl`);
      // Renaming claims it: of two processes, one rename fails.
      if (
        await rename(full, to).then(
          () => true,
          () => false,
        )
      )
        claimed.push({ full: to, mine });
    }
    return claimed;
  };

  return {
    append: (record) =>
      serial(async () => {
        const line = `${JSON.stringify(record)}\n`;
        if (bytes + line.length > opts.maxBytes) throw new Error('usage ledger spool is full');
        if (!file) {
          mkdirSync(opts.dir, { recursive: true });
          const name = `${ACTIVE}${tag()}.jsonl`;
          file = { name, handle: await open(path.join(opts.dir, name), 'a') };
        }
        await file.handle.appendFile(line);
        await file.handle.datasync();
        bytes += line.length;
      }),
    bytes: () => bytes,
    replay: (insert) =>
      serial(async () => {
        await rotate();
        let replayed = 0;
        for (const { full, mine } of await claim()) {
          const text = await readFile(full, 'utf8');
          const records = parseLines(text);
          for (let i = 0; i < records.length; i += 500) await insert(records.slice(i, i + 500));
          await unlink(full);
          if (mine) bytes = Math.max(0, bytes - text.length);
          replayed += records.length;
        }
        return replayed;
      }),
    close: () =>
      serial(async () => {
        await file?.handle.close();
        file = null;
      }),
  };
}
