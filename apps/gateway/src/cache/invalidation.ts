import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';

/**
 * Tells every instance to drop one entry of a local cache, over the store's
 * pub/sub. One failure policy for all such caches: a lost message is
 * tolerated because each of them also expires its entries (and revocation
 * has its own marker, see api-key-verifier.ts). So a failed subscribe is
 * logged and tried again on the next use, a failed publish is logged, and
 * neither fails the request that caused it.
 */
export type InvalidationChannel = {
  /** Subscribes unless already subscribed (or subscribing); cheap, call it on every use. */
  ensureSubscribed(): void;
  /** Asks every instance (this one included, via its subscription) to drop `key`. */
  publish(key: string): Promise<void>;
  close(): Promise<void>;
};

export function createInvalidationChannel(opts: {
  kv: KeyValueStore;
  logger: Logger;
  /** The pub/sub channel, e.g. `api-keys:invalidate`. */
  channel: string;
  /** Drops `key` from this instance's cache. */
  drop: (key: string) => void;
}): InvalidationChannel {
  let unsubscribe: Promise<() => Promise<void>> | undefined;
  return {
    ensureSubscribed() {
      if (unsubscribe) return;
      const subscribing = opts.kv.subscribe(opts.channel, opts.drop);
      unsubscribe = subscribing;
      subscribing.catch((err: unknown) => {
        opts.logger.warn(
          { err, channel: opts.channel },
          'cache invalidation subscribe failed; entries expire by TTL',
        );
        if (unsubscribe === subscribing) unsubscribe = undefined;
      });
    },
    async publish(key) {
      await opts.kv.publish(opts.channel, key).catch((err: unknown) => {
        opts.logger.warn(
          { err, channel: opts.channel },
          'cache invalidation not broadcast; other instances use the TTL',
        );
      });
    },
    async close() {
      const unsub = await unsubscribe?.catch(() => undefined);
      unsubscribe = undefined;
      await unsub?.();
    },
  };
}
