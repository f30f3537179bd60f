import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { ApiKeyAuthContext, Clock } from '../auth/types';
import type { PrismaClient } from '../generated/prisma/client';
import { hashApiKey } from './hash';
import { createLastUsedWriter, type LastUsedWriter } from './last-used-writer';
import { TtlLruCache } from './lru-cache';
import { type ApiKeyRecord, findApiKeyByHash } from './repo';

/** Lookups are cached this long; revocation does not wait for it (see revocationMarkerKey). */
export const API_KEY_CACHE_TTL_MS = 30_000;
const API_KEY_CACHE_MAX = 10_000;
/** Must outlive every instance's cache entry, so a marker is seen until the DB row is re-read. */
const REVOCATION_MARKER_TTL_MS = 10 * API_KEY_CACHE_TTL_MS;
export const API_KEY_INVALIDATION_CHANNEL = 'api-keys:invalidate';

/**
 * Revocation marker of a key, by its hash. Every request reads it (one GET,
 * issued in parallel with the cache or database lookup), so a revoke is
 * honoured at once by every instance even when its cache still holds the key
 * and even if the pub/sub invalidation is lost.
 */
export function revocationMarkerKey(hash: string): string {
  return `api-keys:revoked:${hash}`;
}

export type ApiKeyVerifierOptions = {
  prisma: PrismaClient;
  kv: KeyValueStore;
  logger: Logger;
  /** GATEWAY_SECRET, the HMAC pepper. */
  pepper: string;
  clock: Clock;
};

/** Authenticates plaintext keys on the hot path and propagates revocations. */
export type ApiKeyVerifier = {
  /** The key's identity, or null for an unknown or revoked key. */
  verify(plaintext: string): Promise<ApiKeyAuthContext | null>;
  /** Call after marking the row revoked: marker for every instance, local eviction, broadcast. */
  announceRevocation(hash: string): Promise<void>;
  /** Batched writer of api_keys.last_used_at. */
  readonly lastUsed: LastUsedWriter;
  close(): Promise<void>;
};

export function createApiKeyVerifier(opts: ApiKeyVerifierOptions): ApiKeyVerifier {
  // null is cached too: repeated unknown keys cost the same as known ones and spare the DB.
  const cache = new TtlLruCache<ApiKeyRecord | null>(API_KEY_CACHE_MAX, API_KEY_CACHE_TTL_MS);
  const lastUsed = createLastUsedWriter({ prisma: opts.prisma, logger: opts.logger });
  let unsubscribe: Promise<() => Promise<void>> | undefined;

  const ensureSubscribed = (): void => {
    if (unsubscribe) return;
    unsubscribe = opts.kv.subscribe(API_KEY_INVALIDATION_CHANNEL, (hash) => cache.delete(hash));
    unsubscribe.catch((err: unknown) => {
      // Eviction is an optimisation; the per-request marker read keeps revocation correct.
      opts.logger.warn({ err }, 'api key invalidation subscribe failed');
      unsubscribe = undefined;
    });
  };

  return {
    async verify(plaintext) {
      ensureSubscribed();
      // Hash first and always do the same two lookups, so timing does not depend on the key.
      const hash = hashApiKey(plaintext, opts.pepper);
      const now = opts.clock();
      const cached = cache.get(hash, now.getTime());
      const [record, marker] = await Promise.all([
        cached ? cached.value : findApiKeyByHash(opts.prisma, hash),
        opts.kv.get(revocationMarkerKey(hash)),
      ]);
      if (!cached) cache.set(hash, record, now.getTime());
      if (!record || record.revoked || marker !== null) return null;
      lastUsed.touch(record.id, now);
      return { kind: 'api_key', userId: record.userId, apiKeyId: record.id, scope: record.scope };
    },
    async announceRevocation(hash) {
      await opts.kv.set(revocationMarkerKey(hash), '1', REVOCATION_MARKER_TTL_MS);
      cache.delete(hash);
      await opts.kv.publish(API_KEY_INVALIDATION_CHANNEL, hash).catch((err: unknown) => {
        opts.logger.warn({ err }, 'api key invalidation publish failed');
      });
    },
    lastUsed,
    async close() {
      await lastUsed.close();
      const unsub = await unsubscribe?.catch(() => undefined);
      await unsub?.();
    },
  };
}
