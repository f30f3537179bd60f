import type { KeyValueStore } from '@platform/db';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { RequestHandler } from 'express';
import type { TokenBudget } from '../ai/runtime';
import { requireAuthOf } from '../auth/api-key-auth';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

function rateLimited(retryAfterMs: number): AppError {
  return new AppError('rate_limited', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  });
}

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
  const keyOf = (userId: string, at: number) =>
    `budget:tokens:${userId}:${new Date(at).toISOString().slice(0, 10)}`;
  return {
    async assertAvailable(userId) {
      const at = now();
      const { total } = await opts.kv.incrWindow(keyOf(userId, at), 0, msUntilUtcMidnight(at) + MINUTE_MS);
      if (total >= opts.dailyTokens) throw rateLimited(msUntilUtcMidnight(at));
    },
    async today(userId) {
      const at = now();
      // Adding 0 reads the counter through the same call the check uses.
      const { total } = await opts.kv.incrWindow(keyOf(userId, at), 0, msUntilUtcMidnight(at) + MINUTE_MS);
      return {
        day: new Date(at).toISOString().slice(0, 10),
        used: total,
        budget: opts.dailyTokens,
        resetsAt: new Date(at + msUntilUtcMidnight(at)),
      };
    },
    consume(userId, tokens) {
      const at = now();
      opts.kv
        .incrWindow(keyOf(userId, at), tokens, msUntilUtcMidnight(at) + MINUTE_MS)
        .catch((err: unknown) => {
          opts.logger.error({ err }, 'token budget not charged');
        });
    },
  };
}

/**
 * Guard for AI routes: request rate per API key (fixed one-minute window) and
 * the caller's daily token budget, checked in parallel so the two store
 * round trips cost one. Over either -> 429 rate_limited with Retry-After.
 */
export function requireAiLimits(opts: {
  kv: KeyValueStore;
  perMinute: number;
  budget: TokenBudget;
}): RequestHandler {
  return async (_req, res, next) => {
    const auth = requireAuthOf(res);
    const subject = auth.kind === 'api_key' ? `key:${auth.apiKeyId}` : `user:${auth.userId}`;
    const [rate] = await Promise.all([
      opts.kv.incrWindow(`rate:ai:${subject}`, 1, MINUTE_MS),
      opts.budget.assertAvailable(auth.userId),
    ]);
    if (rate.total > opts.perMinute) throw rateLimited(rate.resetMs);
    next();
  };
}
