import type { KeyValueStore } from '@platform/db';
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';

/**
 * express-rate-limit store on the shared key-value port: Redis when REDIS_URL
 * is set (counters shared by every instance), in-process memory otherwise. The
 * port's `incrWindow` is an atomic fixed-window counter, which is exactly the
 * window express-rate-limit counts in.
 */
export function createKvRateLimitStore(kv: KeyValueStore, prefix: string): Store {
  let windowMs = 60_000;
  const keyOf = (key: string) => `${prefix}${key}`;
  return {
    prefix,
    localKeys: kv.kind === 'memory',
    init(options: Options) {
      windowMs = options.windowMs;
    },
    async increment(key: string): Promise<ClientRateLimitInfo> {
      const { total, resetMs } = await kv.incrWindow(keyOf(key), 1, windowMs);
      return { totalHits: total, resetTime: new Date(Date.now() + resetMs) };
    },
    async decrement(key: string): Promise<void> {
      await kv.incrWindow(keyOf(key), -1, windowMs);
    },
    async resetKey(key: string): Promise<void> {
      await kv.del(keyOf(key));
    },
  };
}
