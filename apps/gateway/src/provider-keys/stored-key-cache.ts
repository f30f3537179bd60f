import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { StoredKeys } from '../ai/runtime';
import type { PrismaClient } from '../generated/prisma/client';
import { type MasterKeyRing, openKey } from './crypto';
import { findProviderKeys } from './repo';

/** Channel on which instances tell each other to drop a user's cached keys. */
export const PROVIDER_KEYS_CHANNEL = 'provider-keys:changed';

/** The users' decrypted keys for the AI hot path: cached briefly, dropped on every change on any instance. */
export type StoredKeyCache = {
  lookup(userId: string): Promise<StoredKeys>;
  /** Drops the user's entry here and tells the other instances to do the same. */
  invalidate(userId: string): Promise<void>;
  close(): Promise<void>;
};

export type StoredKeyCacheOptions = {
  prisma: PrismaClient;
  kv: KeyValueStore;
  logger: Logger;
  /** null when PROVIDER_KEYS_MASTER_KEYS is unset: nothing can be decrypted, so every lookup is empty. */
  masterKeys: MasterKeyRing | null;
  cacheTtlMs?: number;
  maxCachedUsers?: number;
};

export function createStoredKeyCache(opts: StoredKeyCacheOptions): StoredKeyCache {
  const ttlMs = opts.cacheTtlMs ?? 30_000;
  const maxUsers = opts.maxCachedUsers ?? 10_000;
  const cache = new Map<string, { expiresAt: number; keys: Promise<StoredKeys> }>();
  const unsubscribe = opts.kv
    .subscribe(PROVIDER_KEYS_CHANNEL, (userId) => cache.delete(userId))
    .catch((err: unknown) => {
      opts.logger.error({ err }, 'provider key invalidation subscription failed; relying on cache TTL');
      return async () => undefined;
    });

  const decryptAll = async (userId: string): Promise<StoredKeys> => {
    const ring = opts.masterKeys;
    if (!ring) return {};
    const keys: Record<string, string> = {};
    for (const row of await findProviderKeys(opts.prisma, userId)) {
      try {
        keys[row.provider] = openKey(ring, row, { userId, provider: row.provider });
      } catch {
        // Never log the error itself: only the key id tells the operator what to fix.
        opts.logger.error(
          { provider: row.provider, master_key_id: row.masterKeyId },
          'stored provider key cannot be decrypted; is its master key still configured?',
        );
      }
    }
    return keys as StoredKeys;
  };

  return {
    lookup(userId) {
      const now = Date.now();
      const hit = cache.get(userId);
      if (hit && hit.expiresAt > now) return hit.keys;
      if (cache.size >= maxUsers) cache.delete(cache.keys().next().value as string);
      // The promise is cached, so concurrent requests of one user share one query.
      const keys = decryptAll(userId);
      cache.set(userId, { expiresAt: now + ttlMs, keys });
      keys.catch(() => cache.delete(userId));
      return keys;
    },
    async invalidate(userId) {
      cache.delete(userId);
      await opts.kv.publish(PROVIDER_KEYS_CHANNEL, userId).catch((err: unknown) => {
        opts.logger.warn(
          { err },
          'provider key invalidation not broadcast; other instances use the cache TTL',
        );
      });
    },
    async close() {
      cache.clear();
      await (await unsubscribe)();
    },
  };
}
