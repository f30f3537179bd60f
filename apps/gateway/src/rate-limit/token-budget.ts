import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import { rateLimited } from '@platform/service-kit';
import type { TokenBudget } from '../ai/runtime';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Milliseconds until the next UTC midnight, when the daily budget resets. */
export function msUntilUtcMidnight(now: number): number {
  return DAY_MS - (now % DAY_MS);
}

/**
 * The per-user daily token budget in the shared store. The counter key
 * carries the UTC date, so every instance agrees on when the day ends.
 * Tokens are charged after a request; the check before it refuses once the
 * budget is spent, so one request may overshoot by its own size.
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
  const add = (userId: string, at: number, tokens: number) =>
    opts.kv.incrWindow(keyOf(userId, at), tokens, msUntilUtcMidnight(at) + MINUTE_MS);
  return {
    async assertAvailable(userId) {
      const at = now();
      // Adding 0 reads the counter.
      const { total } = await add(userId, at, 0);
      if (total >= opts.dailyTokens) throw rateLimited(msUntilUtcMidnight(at));
    },
    async today(userId) {
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
      add(userId, at, tokens).catch((err: unknown) => {
        opts.logger.error({ err }, 'token budget not charged');
      });
    },
  };
}
