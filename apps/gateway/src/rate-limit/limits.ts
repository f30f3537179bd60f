import type { KeyValueStore } from '@platform/db';
import { countHit, rateLimited } from '@platform/service-kit';
import type { AuthContext } from '../auth/types';

export type AiLimitOptions = { kv: KeyValueStore; perMinute: number };

/**
 * The request rate per API key on the AI routes (fixed one-minute window):
 * over it -> 429 rate_limited with Retry-After. The AI routes run it as
 * `requireApiKeyAndLimits(deps, { limits: aiLimitCheck(...) })`, together
 * with the key's revocation read (one store round trip). Token and cost budgets are
 * reserved later, once the body is parsed (budgets/, ai/accounting.ts).
 */
export function aiLimitCheck(opts: AiLimitOptions): (auth: AuthContext) => Promise<void> {
  const limit = { name: 'ai', max: opts.perMinute, windowMs: 60_000 };
  return async (auth) => {
    const subject = auth.kind === 'api_key' ? `key:${auth.apiKeyId}` : `user:${auth.userId}`;
    const rate = await countHit(opts.kv, limit, subject);
    if (rate.total > limit.max) throw rateLimited(rate.resetMs);
  };
}
