import { hostname } from 'node:os';
import type { Logger, Registry } from '@platform/logging';
import type { Redis } from 'ioredis';
import type { RawSql } from '../batching/raw-sql';
import { turnWriterOf } from '../batching/redis-turn-writer';
import type { PrismaClient } from '../generated/prisma/client';
import type { UsageLedger } from './ledger';
import { createLedgerHealth } from './ledger-health';
import { type Entry, insertEntriesIsolating } from './ledger-isolate';
import { assertRedisReachable } from './redis-reachable';
import { insertLedgerJson } from './repo';

export type RedisStreamLedgerOptions = {
  /** The store's client (writes batched per turn): appends share a script call with the turn's budget settles. */
  redis: Redis;
  prisma: PrismaClient;
  /** The batched insert's runner: pg on Prisma's pool in the service (batching/raw-sql.ts). */
  sql: RawSql;
  logger: Logger;
  /** Stream key, with the store's prefix. */
  streamKey: string;
  group?: string;
  /**
   * Records per INSERT statement when a read's entries are parsed and checked
   * one by one (after Postgres refused them as a whole); otherwise a read's
   * entries go in as one statement.
   */
  batch?: number;
  /**
   * Stream entries read at once. An entry holds the records of one
   * event-loop turn (up to 256), so this bounds what one read can bring into
   * memory after a long Postgres outage: 128 entries, at most ~32k records
   * (~15 MB of JSON).
   */
  entriesPerRead?: number;
  /** Entries pending this long at another consumer (a killed worker) are taken over. */
  claimIdleMs?: number;
  /** Wait after a failed Postgres write before the same batch is tried again. */
  retryDelayMs?: number;
  /**
   * After a read of fewer than `entriesPerRead` entries, wait this long before reading again,
   * so that one Postgres statement and one XACK carry many records (the
   * records are durable in the stream meanwhile). 0 reads again at once.
   */
  lingerMs?: number;
  /** The app's /metrics registry (backlog, stall, parked records). */
  registry?: Registry;
  /** A drain with a backlog that has not advanced for this long makes the service not ready. */
  stallMs?: number;
};

/**
 * The records of stream entries as the text of one JSON array, joined from
 * the entries as written, without parsing them: 'b' entries hold a JSON
 * array, 'r' entries one object. Null when an entry has another shape.
 * Postgres parses and checks the result (insertLedgerJson).
 */
function joinedRecordsOf(entries: Entry[]): string | null {
  const parts: string[] = [];
  for (const [, fields] of entries) {
    // A pending entry deleted meanwhile comes back without fields: nothing to write.
    if (!fields) continue;
    const [name, value] = fields;
    if (fields.length !== 2 || typeof value !== 'string') return null;
    if (name === 'b' && value.startsWith('[') && value.endsWith(']')) {
      if (value.length > 2) parts.push(value.slice(1, -1));
    } else if (name === 'r' && value.startsWith('{') && value.endsWith('}')) parts.push(value);
    else return null;
  }
  return parts.length > 0 ? `[${parts.join(',')}]` : '';
}

/**
 * The ledger as a Redis stream (the durable point: one XADD, before the
 * answer's last byte) drained by a consumer group, one consumer per process,
 * into Postgres. A batch is inserted with ON CONFLICT (request_id) DO NOTHING
 * (daily sums only for new rows, same statement), then XACK + XDEL. So:
 * - Postgres down: entries stay in the stream (and in this consumer's pending
 *   list), the batch is retried until it commits; nothing is dropped;
 * - a worker killed between commit and XACK: its pending entries are claimed
 *   (XAUTOCLAIM) by another consumer after `claimIdleMs` and replayed, which
 *   inserts nothing twice;
 * - the whole service killed: the stream keeps everything not yet
 *   acknowledged, and the next start's consumers drain it.
 *
 * Over 80 lines: the append side and the drain side share the stream, the consumer's state and the health flags.
 */
export function createRedisStreamLedger(opts: RedisStreamLedgerOptions): UsageLedger & { start(): void } {
  const { redis, prisma, sql, logger, streamKey } = opts;
  const group = opts.group ?? 'ledger';
  const batch = opts.batch ?? 500;
  const entriesPerRead = opts.entriesPerRead ?? 128;
  const claimIdleMs = opts.claimIdleMs ?? 30_000;
  const retryDelayMs = opts.retryDelayMs ?? 1000;
  const lingerMs = opts.lingerMs ?? 500;
  const consumer = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  // Blocking reads need their own connection; a longer command timeout than the block.
  const reader = redis.duplicate({ commandTimeout: 10_000, enableAutoPipelining: false });
  // Connection errors surface as failed reads (logged, retried); without a listener ioredis prints each one.
  reader.on('error', () => {});
  // One XADD per event-loop turn for every record appended in it (group commit), in the same
  // script call as the turn's budget settles: each answer still waits for its own record to be
  // durable, but the appends of concurrent requests share one command.
  const turns = turnWriterOf(redis);
  const health = createLedgerHealth({
    backlog: async () => {
      // Redis down: fail at once (a probe must answer within its bound), not when it reconnects.
      assertRedisReachable(redis);
      const [entries, first] = await Promise.all([
        redis.xlen(streamKey),
        redis.xrange(streamKey, '-', '+', 'COUNT', 1),
      ]);
      return { entries, oldest: first[0]?.[0] ?? null };
    },
    registry: opts.registry,
    ...(opts.stallMs === undefined ? {} : { stallMs: opts.stallMs }),
  });
  let closed = false;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  const ensureGroup = async () => {
    try {
      await reader.xgroup('CREATE', streamKey, group, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error && err.message.includes('BUSYGROUP'))) throw err;
    }
  };

  /**
   * Writes the records of some entries to Postgres. The fast path: one
   * statement that Postgres parses. If it refuses them (one bad record
   * refuses the whole statement), the slow path isolates and parks what it
   * refuses and writes the rest (ledger-isolate.ts). Throws if Postgres is
   * down (or fails in another way that a retry may cure).
   */
  const insertEntries = async (entries: Entry[]) => {
    const joined = joinedRecordsOf(entries);
    if (joined === '') return;
    if (joined !== null) {
      try {
        await insertLedgerJson(sql, joined);
        return;
      } catch {
        // Isolated below; a Postgres outage fails there too.
      }
    }
    await insertEntriesIsolating({ prisma, logger, batch, onParked: (n) => health.parked(n) }, entries);
  };

  /** Writes one batch to Postgres, then acknowledges and deletes it. Throws if Postgres refused. */
  const commit = async (entries: Entry[]) => {
    if (entries.length === 0) return;
    // All of them before the XACK: a crash in between replays the entries, which inserts nothing twice.
    await insertEntries(entries);
    const ids = entries.map(([id]) => id);
    await reader
      .multi()
      .xack(streamKey, group, ...ids)
      .xdel(streamKey, ...ids)
      .exec();
  };

  /** Our pending entries ('0') or new ones ('>', waiting up to a second for one unless `wait` is false). */
  const readOwn = async (from: string, wait = true): Promise<Entry[]> => {
    const res = (
      from === '>' && wait
        ? await reader.xreadgroup(
            'GROUP',
            group,
            consumer,
            'COUNT',
            entriesPerRead,
            'BLOCK',
            1000,
            'STREAMS',
            streamKey,
            from,
          )
        : await reader.xreadgroup(
            'GROUP',
            group,
            consumer,
            'COUNT',
            entriesPerRead,
            'STREAMS',
            streamKey,
            from,
          )
    ) as [string, Entry[]][] | null;
    return res?.[0]?.[1] ?? [];
  };

  const claimAbandoned = async (): Promise<Entry[]> => {
    const res = (await reader.xautoclaim(
      streamKey,
      group,
      consumer,
      claimIdleMs,
      '0',
      'COUNT',
      entriesPerRead,
    )) as [string, Entry[]];
    return res[1] ?? [];
  };

  const run = async () => {
    let groupReady = false;
    // After a failure our own pending entries come first ('0'), then new ones ('>').
    let backlog = true;
    let lastClaim = 0;
    while (!closed) {
      try {
        if (!groupReady) {
          await ensureGroup();
          groupReady = true;
        }
        if (Date.now() - lastClaim >= claimIdleMs / 2) {
          lastClaim = Date.now();
          await commit(await claimAbandoned());
        }
        const entries = await readOwn(backlog ? '0' : '>');
        if (backlog && entries.length === 0) backlog = false;
        await commit(entries);
        if (entries.length > 0 && entries.length < entriesPerRead && lingerMs > 0 && !closed)
          await sleep(lingerMs);
      } catch (err) {
        if (closed) break;
        if (err instanceof Error && err.message.includes('NOGROUP')) groupReady = false;
        backlog = true;
        logger.error(
          { err: err instanceof Error ? err.message : String(err) },
          'usage ledger drain failed; retrying',
        );
        await sleep(retryDelayMs);
      }
    }
    // Stopping: what arrived while we lingered is written now, not at the next start.
    try {
      for (let entries = await readOwn('>', false); entries.length > 0; entries = await readOwn('>', false))
        await commit(entries);
    } catch {
      // Postgres or Redis gone: the stream keeps the entries for the next consumer.
    }
  };

  return {
    readiness: health.readiness,
    start() {
      loop ??= run();
    },
    async append(record) {
      assertRedisReachable(redis);
      await turns.append(streamKey, record);
    },
    async flush(timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while ((await redis.xlen(streamKey)) > 0) {
        if (Date.now() > until) throw new Error('usage ledger not drained in time');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      closed = true;
      (wake as (() => void) | null)?.();
      // The batch in hand is finished (a blocked read ends within its BLOCK
      // time); past 3 s the connection is cut and the batch is replayed later.
      await Promise.race([loop?.catch(() => {}), new Promise((r) => setTimeout(r, 3000).unref())]);
      reader.disconnect();
      await loop?.catch(() => {});
    },
  };
}
