import type { KeyValueStore } from '@platform/db';
import { consumeLimit, type Limit } from '@platform/service-kit';

/**
 * Unknown or revoked API keys per client address and minute. Past it, a bad key
 * from that address is answered 429 instead of 401 until the minute is over. A
 * key that verifies is never refused for it: behind one NAT (or one proxy with
 * TRUST_PROXY_HOPS unset) a guesser must not lock its neighbours out, and keys
 * carry 256 random bits, so letting a valid one through a throttled address
 * gives a guesser nothing.
 */
export const INVALID_KEY_LIMIT: Limit = { name: 'invalid-key:ip', max: 60, windowMs: 60_000 };

export type KeyGuessingGuard = {
  /** After a refused key: counts it; 429 instead of 401 once the address is over the limit. */
  failed(ip: string): Promise<void>;
};

/** Only refused keys touch the shared counter: callers with good keys pay nothing on the hot path. */
export function createKeyGuessingGuard(kv: KeyValueStore): KeyGuessingGuard {
  return {
    async failed(ip) {
      await consumeLimit(kv, INVALID_KEY_LIMIT, ip);
    },
  };
}
