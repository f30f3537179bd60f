import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import { rateLimited } from '@platform/service-kit';
import type { TokenBudget } from '../ai/runtime';
import { createBatchWriter } from '../batching/batch-writer';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Milliseconds until the next UTC midnight, when the daily budget resets. */
export function msUntilUtcMidnight(now: number): number {
  return DAY_MS - (now % DAY_MS);
}

/** How long a charge may wait to be sent: the charges of that time go out as one increment per user and day. */
export const CHARGE_DELAY_MS = 50;
/** How old a read of a user's shared counter may be when the check uses it. */
export const READ_MAX_AGE_MS = 50;
/** Bounds the readings kept per instance; past it they are all dropped, and each user's next check reads again. */
const MAX_READINGS = 10_000;

/**
 * The shared counter as read at `readAt`, and what this instance charged from
 * just before that read on (its charges not yet sent then, and every one
 * since): the counter cannot have seen those yet, so the check adds them.
 */
type Reading = { readAt: number; total: number; since: number };

/**
 * The per-user daily token budget in the shared store. The counter key
 * carries the UTC date, so every instance agrees on when the day ends.
 * Tokens are charged after a request; the check before it refuses once the
 * budget is spent. Both sides are batched:
 * - charges are summed per user and day and sent every CHARGE_DELAY_MS (and
 *   on close), one command per user instead of one per request;
 * - the check reads the shared counter at most once per READ_MAX_AGE_MS per
 *   user and day, and adds what this instance charged since that read (sent
 *   or not), so an instance always counts its own consumption at once.
 * So one request may overshoot by its own size, plus what the other
 * instances consumed in the last READ_MAX_AGE_MS + CHARGE_DELAY_MS.
 */
export function createTokenBudget(opts: {
  kv: KeyValueStore;
  dailyTokens: number;
  logger: Logger;
  now?: () => number;
}): TokenBudget {
  const now = opts.now ?? Date.now;
  // The UTC date of the current day, recomputed only when the day changes (hot path).
  let day = { start: 0, end: 0, label: '' };
  const dayOf = (at: number) => {
    if (at < day.start || at >= day.end) {
      const start = at - (at % DAY_MS);
      day = { start, end: start + DAY_MS, label: new Date(start).toISOString().slice(0, 10) };
    }
    return day.label;
  };
  const keyOf = (userId: string, at: number) => `budget:tokens:${userId}:${dayOf(at)}`;
  const windowOf = (at: number) => msUntilUtcMidnight(at) + MINUTE_MS;
  const add = (userId: string, at: number, tokens: number) =>
    opts.kv.incrWindow(keyOf(userId, at), tokens, windowOf(at));

  // Per counter key: tokens charged here and not yet sent; the latest reading; a read in flight.
  const unsent = new Map<string, number>();
  const readings = new Map<string, Reading>();
  const reads = new Map<string, { reading: Reading; done: Promise<Reading> }>();

  /** One read per key at a time: concurrent checks share it. Charges made while it is out count in its `since`. */
  const read = (key: string, at: number): Promise<Reading> => {
    const pending = reads.get(key);
    if (pending) return pending.done;
    const reading: Reading = { readAt: at, total: 0, since: unsent.get(key) ?? 0 };
    const done = opts.kv
      // Adding 0 reads the counter.
      .incrWindow(key, 0, windowOf(at))
      .then(({ total }) => {
        reading.total = total;
        if (readings.size >= MAX_READINGS) readings.clear();
        readings.set(key, reading);
        return reading;
      })
      .finally(() => reads.delete(key));
    reads.set(key, { reading, done });
    return done;
  };

  // Charges wait in the shared batch writer; a batch goes out as one increment per counter key.
  const charges = createBatchWriter<{ key: string; tokens: number; windowMs: number }>({
    write: async (batch) => {
      const perKey = new Map<string, { tokens: number; windowMs: number }>();
      for (const { key, tokens, windowMs } of batch) {
        const sum = perKey.get(key);
        if (sum) sum.tokens += tokens;
        else perKey.set(key, { tokens, windowMs });
      }
      // From here on a read is queued behind these increments (one connection, in order), so it sees them.
      for (const [key, sum] of perKey) {
        const left = (unsent.get(key) ?? 0) - sum.tokens;
        if (left > 0) unsent.set(key, left);
        else unsent.delete(key);
      }
      await Promise.all([...perKey].map(([key, sum]) => opts.kv.incrWindow(key, sum.tokens, sum.windowMs)));
    },
    maxDelayMs: CHARGE_DELAY_MS,
    maxBatch: 10_000,
    maxBuffered: 100_000,
    retryFailed: false,
    onFailure: ({ err, items }) => opts.logger.error({ err, charges: items }, 'token budget not charged'),
  });

  return {
    async assertAvailable(userId) {
      const at = now();
      const key = keyOf(userId, at);
      const latest = readings.get(key);
      // A clock that went back makes the reading stale too, rather than fresh for as long.
      const age = latest ? at - latest.readAt : -1;
      const reading = latest && age >= 0 && age < READ_MAX_AGE_MS ? latest : await read(key, at);
      if (reading.total + reading.since >= opts.dailyTokens) throw rateLimited(msUntilUtcMidnight(at));
    },
    async today(userId) {
      await charges.flush();
      const at = now();
      const { total } = await add(userId, at, 0);
      return {
        day: dayOf(at),
        used: total,
        budget: opts.dailyTokens,
        resetsAt: new Date(at + msUntilUtcMidnight(at)),
      };
    },
    consume(userId, tokens) {
      const at = now();
      const key = keyOf(userId, at);
      unsent.set(key, (unsent.get(key) ?? 0) + tokens);
      const latest = readings.get(key);
      if (latest) latest.since += tokens;
      const pending = reads.get(key)?.reading;
      if (pending && pending !== latest) pending.since += tokens;
      charges.add({ key, tokens, windowMs: windowOf(at) });
    },
    close: () => charges.close(),
  };
}
