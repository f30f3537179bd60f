import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { createInvalidationChannel } from './invalidation';
import { lruCache } from './lru';

/**
 * One value per owner (a user id, or a team's billing subject) for the AI hot
 * path, e.g. their stored provider keys or their capturing projects: the
 * loading promise is cached, so concurrent requests of one owner share one
 * read; an entry expires after `ttlMs` and is dropped on every instance when
 * the owner changes what it holds (pub/sub, see invalidation.ts); a load that
 * fails is not kept, so the next request reads again.
 */
export type OwnerCache<V> = {
  get(owner: string): Promise<V>;
  /** Drops the owner's entry here and tells the other instances to do the same. */
  invalidate(owner: string): Promise<void>;
  close(): Promise<void>;
};

export type OwnerCacheOptions<V> = {
  kv: KeyValueStore;
  logger: Logger;
  clock: Clock;
  /** The pub/sub channel its invalidations go on, e.g. `provider-keys:changed`. */
  channel: string;
  /** Reads the owner's value on a miss. */
  load: (owner: string) => Promise<V>;
  /** Default 30 s. */
  ttlMs?: number;
  /** Owners kept, least recently used out first; default 10,000. */
  max?: number;
};

export function createOwnerCache<V>(opts: OwnerCacheOptions<V>): OwnerCache<V> {
  const cache = lruCache<string, Promise<V>>({
    max: opts.max ?? 10_000,
    ttlMs: opts.ttlMs ?? 30_000,
    clock: opts.clock,
  });
  const invalidation = createInvalidationChannel({
    kv: opts.kv,
    logger: opts.logger,
    channel: opts.channel,
    drop: (owner) => cache.delete(owner),
  });
  invalidation.ensureSubscribed();
  return {
    get(owner) {
      invalidation.ensureSubscribed();
      const hit = cache.get(owner);
      if (hit) return hit;
      const loaded = opts.load(owner);
      cache.set(owner, loaded);
      loaded.catch(() => {
        if (cache.peek(owner) === loaded) cache.delete(owner);
      });
      return loaded;
    },
    async invalidate(owner) {
      cache.delete(owner);
      await invalidation.publish(owner);
    },
    async close() {
      cache.clear();
      await invalidation.close();
    },
  };
}
