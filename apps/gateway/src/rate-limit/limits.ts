import type { KeyValueStore } from '@platform/db';
import { countHit, rateLimited } from '@platform/service-kit';
import type { RequestHandler } from 'express';
import type { TokenBudget } from '../ai/runtime';
import { requireAuthOf } from '../auth/api-key-auth';
import type { AuthContext } from '../auth/types';

export type AiLimitOptions = { kv: KeyValueStore; perMinute: number; budget: TokenBudget };

/**
 * The AI limits of one caller: request rate per API key (fixed one-minute
 * window) and the caller's daily token budget, both issued at once (one store
 * round trip). Over either -> 429 rate_limited with Retry-After.
 */
export function aiLimitCheck(opts: AiLimitOptions): (auth: AuthContext) => Promise<void> {
  const limit = { name: 'ai', max: opts.perMinute, windowMs: 60_000 };
  return async (auth) => {
    const subject = auth.kind === 'api_key' ? `key:${auth.apiKeyId}` : `user:${auth.userId}`;
    const [rate] = await Promise.all([
      countHit(opts.kv, limit, subject),
      opts.budget.assertAvailable(auth.userId),
    ]);
    if (rate.total > limit.max) throw rateLimited(rate.resetMs);
  };
}

/**
 * Guard for AI routes after authentication (see aiLimitCheck). The API-key
 * routes use `requireApiKey(deps, { alongside: aiLimitCheck(...) })` instead,
 * which issues these together with the key's revocation read.
 */
export function requireAiLimits(opts: AiLimitOptions): RequestHandler {
  const check = aiLimitCheck(opts);
  return async (_req, res, next) => {
    await check(requireAuthOf(res));
    next();
  };
}
