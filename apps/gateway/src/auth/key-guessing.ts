import type { KeyValueStore } from '@platform/db';
import { checkLimit, consumeLimit, type Limit } from '@platform/service-kit';

/**
 * Unknown or revoked API keys per client address and minute. Past it, every key
 * check from that address is refused with 429 before any lookup, so guessing
 * keys costs neither database queries nor cache entries.
 */
export const INVALID_KEY_LIMIT: Limit = { name: 'invalid-key:ip', max: 60, windowMs: 60_000 };

/** Bounds the per-instance suspect list under a flood of addresses. */
const MAX_SUSPECTS = 10_000;

export type KeyGuessingGuard = {
  /** Before a key lookup: 429 when this address is over the limit. */
  before(ip: string): Promise<void>;
  /** After a refused key: counts it; 429 instead of 401 once over the limit. */
  failed(ip: string): Promise<void>;
};

/**
 * Only addresses that sent a bad key within the window (remembered per
 * instance) read the shared counter before a lookup, so callers with good keys
 * pay no extra round trip on the hot path.
 */
export function createKeyGuessingGuard(kv: KeyValueStore, now: () => number = Date.now): KeyGuessingGuard {
  const suspects = new Map<string, number>();
  return {
    async before(ip) {
      const until = suspects.get(ip);
      if (until === undefined) return;
      if (until <= now()) {
        suspects.delete(ip);
        return;
      }
      await checkLimit(kv, INVALID_KEY_LIMIT, ip);
    },
    async failed(ip) {
      if (suspects.size >= MAX_SUSPECTS) suspects.clear();
      suspects.set(ip, now() + INVALID_KEY_LIMIT.windowMs);
      await consumeLimit(kv, INVALID_KEY_LIMIT, ip);
    },
  };
}
