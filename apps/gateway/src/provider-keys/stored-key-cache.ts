import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { StoredKeys } from '../ai/runtime';
import type { RawSql } from '../batching/raw-sql';
import { createOwnerCache } from '../cache/owner-cache';
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
  /** The pool's raw SQL: the hot path's read stays off Prisma (repo.ts findProviderKeys). */
  sql: RawSql;
  kv: KeyValueStore;
  logger: Logger;
  /** null when PROVIDER_KEYS_MASTER_KEYS is unset: nothing can be decrypted, so every lookup is empty. */
  masterKeys: MasterKeyRing | null;
  clock: Clock;
  cacheTtlMs?: number;
  maxCachedUsers?: number;
};

export function createStoredKeyCache(opts: StoredKeyCacheOptions): StoredKeyCache {
  const decryptAll = async (userId: string): Promise<StoredKeys> => {
    const ring = opts.masterKeys;
    if (!ring) return {};
    const keys: Record<string, string> = {};
    for (const row of await findProviderKeys(opts.sql, userId)) {
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
  // A failed read (Postgres down) is not kept: the next request reads again.
  const cache = createOwnerCache({
    kv: opts.kv,
    logger: opts.logger,
    clock: opts.clock,
    channel: PROVIDER_KEYS_CHANNEL,
    load: decryptAll,
    ttlMs: opts.cacheTtlMs,
    max: opts.maxCachedUsers,
  });
  return { lookup: cache.get, invalidate: cache.invalidate, close: cache.close };
}
