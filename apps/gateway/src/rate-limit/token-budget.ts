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

/**
 * The per-user daily token budget in the shared store. The counter key
 * carries the UTC date, so every instance agrees on when the day ends.
 * Tokens are charged after a request; the check before it refuses once the
 * budget is spent, so one request may overshoot by its own size, plus what
 * was consumed in the last CHARGE_DELAY_MS: charges are summed per user and
 * day and sent every CHARGE_DELAY_MS (and on close), one command per user
 * instead of one per request.
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

  // Charges wait in the shared batch writer; a batch goes out as one increment per counter key.
  const charges = createBatchWriter<{ key: string; tokens: number; windowMs: number }>({
    write: async (batch) => {
      const perKey = new Map<string, { tokens: number; windowMs: number }>();
      for (const { key, tokens, windowMs } of batch) {
        const sum = perKey.get(key);
        if (sum) sum.tokens += tokens;
        else perKey.set(key, { tokens, windowMs });
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
      // Adding 0 reads the counter.
      const { total } = await add(userId, at, 0);
      if (total >= opts.dailyTokens) throw rateLimited(msUntilUtcMidnight(at));
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
      charges.add({ key: keyOf(userId, at), tokens, windowMs: windowOf(at) });
    },
    close: () => charges.close(),
  };
}
