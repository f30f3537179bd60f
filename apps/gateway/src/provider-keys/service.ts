import type { StoredProviderKey } from '@platform/contract';
import type { KeyValueStore } from '@platform/db';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { StoredKeys } from '../ai/runtime';
import type { PrismaClient } from '../generated/prisma/client';
import { type MasterKeyRing, openKey, sealKey } from './crypto';
import { deleteProviderKey, findProviderKeys, upsertProviderKey } from './repo';

/** Channel on which instances tell each other to drop a user's cached keys. */
export const PROVIDER_KEYS_CHANNEL = 'provider-keys:changed';

export type ProviderKeyService = {
  store(userId: string, provider: string, key: string): Promise<StoredProviderKey>;
  list(userId: string): Promise<StoredProviderKey[]>;
  /** Throws 404 provider key not found when there is none. */
  remove(userId: string, provider: string): Promise<void>;
  /** The user's decrypted keys for the AI hot path; cached briefly, dropped on every change. */
  lookup(userId: string): Promise<StoredKeys>;
  close(): Promise<void>;
};

export type ProviderKeyServiceOptions = {
  prisma: PrismaClient;
  kv: KeyValueStore;
  logger: Logger;
  /** null when PROVIDER_KEYS_MASTER_KEYS is unset: keys can be listed and deleted, not stored or used. */
  masterKeys: MasterKeyRing | null;
  cacheTtlMs?: number;
  maxCachedUsers?: number;
};

function toStored(row: { provider: string; createdAt: Date; last4: string }): StoredProviderKey {
  return {
    provider: row.provider as StoredProviderKey['provider'],
    created_at: row.createdAt.toISOString(),
    last4: row.last4,
  };
}

export function createProviderKeyService(opts: ProviderKeyServiceOptions): ProviderKeyService {
  const ttlMs = opts.cacheTtlMs ?? 30_000;
  const maxUsers = opts.maxCachedUsers ?? 10_000;
  const cache = new Map<string, { expiresAt: number; keys: Promise<StoredKeys> }>();
  const unsubscribe = opts.kv
    .subscribe(PROVIDER_KEYS_CHANNEL, (userId) => cache.delete(userId))
    .catch((err: unknown) => {
      opts.logger.error({ err }, 'provider key invalidation subscription failed; relying on cache TTL');
      return async () => undefined;
    });

  const invalidate = async (userId: string) => {
    cache.delete(userId);
    await opts.kv.publish(PROVIDER_KEYS_CHANNEL, userId).catch((err: unknown) => {
      opts.logger.warn({ err }, 'provider key invalidation not broadcast; other instances use the cache TTL');
    });
  };

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
    async store(userId, provider, key) {
      if (!opts.masterKeys)
        throw new AppError('service_unavailable', { message: 'key storage is not configured' });
      const sealed = sealKey(opts.masterKeys, key, { userId, provider });
      const { createdAt } = await upsertProviderKey(opts.prisma, {
        userId,
        provider,
        last4: key.slice(-4),
        sealed,
      });
      await invalidate(userId);
      return toStored({ provider, createdAt, last4: key.slice(-4) });
    },
    async list(userId) {
      return (await findProviderKeys(opts.prisma, userId)).map(toStored);
    },
    async remove(userId, provider) {
      const deleted = await deleteProviderKey(opts.prisma, userId, provider);
      await invalidate(userId);
      if (!deleted) throw new AppError('provider_key_not_found');
    },
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
    async close() {
      cache.clear();
      await (await unsubscribe)();
    },
  };
}
