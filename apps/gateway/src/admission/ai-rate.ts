import type { KeyValueStore } from '@platform/db';
import { countHit, windowKey } from '@platform/service-kit';
import type { AuthContext } from '../auth/types';
import type { RateCounter } from './pending';
import { rateRefusal } from './rate-refusal';

export type AiLimitOptions = { kv: KeyValueStore; perMinute: number };

/** The AI request rate of a caller: checked on its own, or described for a check made elsewhere. */
export type AiLimit = {
  /** Counts one hit; over the limit -> 429 rate_limited with Retry-After. */
  check(auth: AuthContext): Promise<void>;
  /** The counter `check` counts on, for the budget reservation that counts it in the same script. */
  counterOf(auth: AuthContext): RateCounter;
};

/**
 * The request rate per API key on the AI routes (fixed one-minute window):
 * over it -> 429 rate_limited with Retry-After. The AI routes run it through
 * `requireApiKeyAndLimits` (key-and-limits.ts): with the key's
 * revocation read, or for a key this instance has cached, inside the budget
 * reservation's script (pending.ts). Either way one hit per request.
 */
export function aiLimitCheck(opts: AiLimitOptions): AiLimit {
  const limit = { name: 'ai', max: opts.perMinute, windowMs: 60_000 };
  const subjectOf = (auth: AuthContext) =>
    auth.kind === 'api_key' ? `key:${auth.apiKeyId}` : `user:${auth.userId}`;
  // A key's requests_per_minute below the server's limit takes its place, on the same counter.
  const counterOf = (auth: AuthContext): RateCounter => {
    const own = auth.kind === 'api_key' ? auth.rules?.requests_per_minute : undefined;
    const counter = { key: windowKey(limit, subjectOf(auth)), max: limit.max, windowMs: limit.windowMs };
    if (own === undefined || own >= limit.max || auth.kind !== 'api_key') return counter;
    return { ...counter, max: own, keyRule: { apiKeyId: auth.apiKeyId } };
  };
  return {
    async check(auth) {
      const counter = counterOf(auth);
      const rate = await countHit(opts.kv, { ...limit, max: counter.max }, subjectOf(auth));
      if (rate.total > counter.max) throw rateRefusal(counter, rate.resetMs);
    },
    counterOf,
  };
}
