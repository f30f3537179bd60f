import type { Clock } from '@platform/service-kit';
import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { MasterKeyRing } from './crypto';
import type { StoredKeyCache } from './stored-key-cache';

/** What the provider-key operations use; the part of GatewayDeps they see. */
export type ProviderKeyDeps = {
  prisma: PrismaClient;
  /** Raw SQL on the same pool (the stored keys' read: repo.ts findProviderKeys). */
  sql: RawSql;
  /** null when PROVIDER_KEYS_MASTER_KEYS is unset: keys can be listed and deleted, not stored or used. */
  masterKeys: MasterKeyRing | null;
  storedKeys: StoredKeyCache;
  clock: Clock;
};
