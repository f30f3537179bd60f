import type { Clock } from '@platform/service-kit';
import { LRUCache } from 'lru-cache';

export type { LRUCache } from 'lru-cache';

export type LruOptions<K, V> = {
  /** Entries kept; past it the least recently used one goes. */
  max: number;
  /** With it, an entry also expires this long after it was set (read by `clock`). */
  ttlMs?: number;
  clock?: Clock;
  /** Called for an entry pushed out by `max` (not for delete, expiry or overwrite), e.g. to close a client. */
  onEvict?: (value: V, key: K) => void;
};

/**
 * The gateway's one bounded map (lru-cache): every cache that could grow with
 * callers, keys or addresses is one of these, so there is one eviction policy
 * (least recently used) and one notion of expiry (the injected clock, checked
 * on every read).
 */
export function lruCache<K extends {}, V extends {}>(opts: LruOptions<K, V>): LRUCache<K, V> {
  const { onEvict } = opts;
  return new LRUCache<K, V>({
    max: opts.max,
    ...(opts.ttlMs === undefined ? {} : { ttl: opts.ttlMs, ttlResolution: 0 }),
    ...(opts.clock === undefined ? {} : { perf: { now: opts.clock } }),
    ...(onEvict === undefined
      ? {}
      : {
          dispose: (value: V, key: K, reason: LRUCache.DisposeReason) => {
            if (reason === 'evict') onEvict(value, key);
          },
        }),
  });
}
