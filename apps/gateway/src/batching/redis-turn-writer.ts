import type { Redis } from 'ioredis';
import { tickBatcher } from './tick-batcher';

/** A change to one counter (its full key): `by` added; `ttlMs` its expiry if it has none. */
export type KeyDelta = { key: string; by: number; ttlMs: number };

/**
 * What the requests that finish in one event-loop turn write to Redis: the
 * ledger's records (usage/ledger-redis-stream.ts) and the budget settles
 * (budgets/counter-store-redis.ts). Both go out as one script call per turn.
 */
export type RedisTurnWriter = {
  /** Appends a record to a stream (in an entry holding the turn's records as a JSON array, field `b`). */
  append(streamKey: string, record: unknown): Promise<void>;
  /**
   * Adds the deltas to their counters (each counter's deltas of the turn
   * summed). Rejects when a counter could not be changed (e.g. it holds no
   * integer); the turn's records are written all the same.
   */
  adjust(deltas: readonly KeyDelta[]): Promise<void>;
};

// KEYS: the stream, then the counters. ARGV: the records (a JSON array, or ''
// for none), then per counter its delta and ttl. The XADD first: a record is
// durable whatever happens to a counter; a counter that cannot be changed is
// skipped (pcall) and counted in the reply.
const TURN_LUA = `
if ARGV[1] ~= '' then redis.call('XADD', KEYS[1], '*', 'b', ARGV[1]) end
local failed = 0
for i = 2, #KEYS do
  local ok = redis.pcall('INCRBY', KEYS[i], ARGV[i * 2 - 2])
  if type(ok) == 'table' and ok.err then
    failed = failed + 1
  elseif redis.call('PTTL', KEYS[i]) < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[i * 2 - 1])
  end
end
return failed
`;

type WithTurnScript = Redis & { moneyTurn(n: number, ...args: (string | number)[]): Promise<number> };

type Item =
  | { kind: 'append'; streamKey: string; record: unknown }
  | { kind: 'adjust'; deltas: readonly KeyDelta[] };

export class CountersNotAdjustedError extends Error {
  constructor(readonly failed: number) {
    super(`${failed} budget counter(s) could not be adjusted`);
    this.name = 'CountersNotAdjustedError';
  }
}

function createRedisTurnWriter(redis: Redis): RedisTurnWriter {
  if (!('moneyTurn' in redis)) redis.defineCommand('moneyTurn', { lua: TURN_LUA });
  const r = redis as WithTurnScript;
  const write = tickBatcher<Item>(async (items) => {
    const records = new Map<string, unknown[]>();
    const sums = new Map<string, { by: number; ttlMs: number }>();
    for (const item of items) {
      if (item.kind === 'append') {
        const list = records.get(item.streamKey);
        if (list) list.push(item.record);
        else records.set(item.streamKey, [item.record]);
        continue;
      }
      for (const d of item.deltas) {
        const known = sums.get(d.key);
        if (known) {
          known.by += d.by;
          known.ttlMs = Math.max(known.ttlMs, d.ttlMs);
        } else sums.set(d.key, { by: d.by, ttlMs: d.ttlMs });
      }
    }
    const keys: string[] = [];
    const args: number[] = [];
    for (const [key, { by, ttlMs }] of sums) {
      if (Math.round(by) === 0) continue;
      keys.push(key);
      args.push(Math.round(by), Math.ceil(ttlMs));
    }
    // One call per stream (one in practice: a process has one ledger); the counters ride on the first.
    const streams = [...records.entries()];
    if (streams.length === 0 && keys.length === 0) return;
    if (streams.length === 0) streams.push(['', []]);
    const calls = streams.map(([streamKey, list], i) =>
      i === 0
        ? r.moneyTurn(
            1 + keys.length,
            // Without records the first key is a placeholder the script does not touch.
            streamKey || (keys[0] as string),
            ...keys,
            list.length > 0 ? JSON.stringify(list) : '',
            ...args,
          )
        : r.moneyTurn(1, streamKey, JSON.stringify(list)),
    );
    const [failed] = await Promise.all(calls);
    if (failed) {
      const err = new CountersNotAdjustedError(failed);
      return items.map((item) => (item.kind === 'adjust' ? err : undefined));
    }
  });
  return {
    append: (streamKey, record) => write({ kind: 'append', streamKey, record }),
    adjust: (deltas) => write({ kind: 'adjust', deltas }),
  };
}

const writers = new WeakMap<Redis, RedisTurnWriter>();

/**
 * The turn writer of a Redis client: one per client, shared by everything
 * that writes through it, so that the ledger's appends and the budget
 * settles of a turn share one script call.
 */
export function turnWriterOf(redis: Redis): RedisTurnWriter {
  let writer = writers.get(redis);
  if (!writer) {
    writer = createRedisTurnWriter(redis);
    writers.set(redis, writer);
  }
  return writer;
}
