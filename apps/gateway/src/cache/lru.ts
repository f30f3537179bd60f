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

/** Every entry counts 1 towards `maxSize`: the same bound as lru-cache's `max`. */
const ONE = () => 1;

/**
 * The gateway's one bounded map (lru-cache): every cache that could grow with
 * callers, keys or addresses is one of these, so there is one eviction policy
 * (least recently used) and one notion of expiry (the injected clock, checked
 * on every read).
 *
 * The bound is lru-cache's `maxSize` with each entry sized 1, not its `max`:
 * `max` allocates its arrays for every slot up front (~28 bytes per slot, ~48
 * with a ttl), which for the gateway's caches (~230,000 slots in all) was ~6 MB
 * of every worker's heap before a single entry; these arrays grow with the
 * entries instead (issue 46).
 */
export function lruCache<K extends {}, V extends {}>(opts: LruOptions<K, V>): LRUCache<K, V> {
  const { onEvict } = opts;
  return new LRUCache<K, V>({
    maxSize: opts.max,
    sizeCalculation: ONE,
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
