import type { KeyValueStore } from '@platform/db';
import { countHit, rateLimited } from '@platform/service-kit';
import type { TokenBudget } from '../ai/runtime';
import type { AuthContext } from '../auth/types';

export type AiLimitOptions = { kv: KeyValueStore; perMinute: number; budget: TokenBudget };

/**
 * The AI limits of one caller: request rate per API key (fixed one-minute
 * window) and the caller's daily token budget, both issued at once (one store
 * round trip). Over either -> 429 rate_limited with Retry-After. The AI
 * routes run it as `requireApiKey(deps, { alongside: aiLimitCheck(...) })`,
 * together with the key's revocation read.
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
