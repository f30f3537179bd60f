import type { KeyValueStore } from '@platform/db';
import { countHit, rateLimited } from '@platform/service-kit';
import type { RequestHandler } from 'express';
import type { TokenBudget } from '../ai/runtime';
import { requireAuthOf } from '../auth/api-key-auth';

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
  const limit = { name: 'ai', max: opts.perMinute, windowMs: 60_000 };
  return async (_req, res, next) => {
    const auth = requireAuthOf(res);
    const subject = auth.kind === 'api_key' ? `key:${auth.apiKeyId}` : `user:${auth.userId}`;
    const [rate] = await Promise.all([
      countHit(opts.kv, limit, subject),
      opts.budget.assertAvailable(auth.userId),
    ]);
    if (rate.total > limit.max) throw rateLimited(rate.resetMs);
    next();
  };
}
