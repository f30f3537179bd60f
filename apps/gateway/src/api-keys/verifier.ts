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
  /**
   * verify(), plus `alongside(identity)` for a valid key (e.g. the rate and
   * budget checks). With the key in the cache, `alongside` starts together
   * with the revocation read, so their store commands share one round trip
   * (auto-pipelined); otherwise it starts once the key is known. Its outcome
   * is returned, not thrown, and only for a key that turned out valid: a
   * revoked key still gets null (its rate counter may have counted one hit).
   */
  verifyAlongside(
    plaintext: string,
    alongside: (auth: ApiKeyAuthContext) => Promise<void>,
  ): Promise<{ auth: ApiKeyAuthContext | null; alongside: PromiseSettledResult<void> | null }>;
  /** Call after marking the row revoked: marker for every instance, local eviction, broadcast. */
  announceRevocation(hash: string): Promise<void>;
  /** Batched writer of api_keys.last_used_at. */
  readonly lastUsed: LastUsedWriter;
  close(): Promise<void>;
};

function settle(promise: Promise<void>): Promise<PromiseSettledResult<void>> {
  return promise.then(
    () => ({ status: 'fulfilled', value: undefined }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}

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

  const identity = (record: ApiKeyRecord): ApiKeyAuthContext => ({
    kind: 'api_key',
    userId: record.userId,
    apiKeyId: record.id,
    scope: record.scope,
  });

  async function check(
    plaintext: string,
    alongside: ((auth: ApiKeyAuthContext) => Promise<void>) | undefined,
  ): Promise<{ auth: ApiKeyAuthContext | null; alongside: PromiseSettledResult<void> | null }> {
    ensureSubscribed();
    // Hash first and always do the same two lookups, so timing does not depend on the key.
    const hash = hashApiKey(plaintext, opts.pepper);
    const now = opts.clock();
    const cached = cache.get(hash, now.getTime());
    const markerRead = opts.kv.get(revocationMarkerKey(hash));
    const early =
      alongside && cached?.value && !cached.value.revoked ? settle(alongside(identity(cached.value))) : null;
    const [record, marker] = await Promise.all([
      cached ? cached.value : findApiKeyByHash(opts.prisma, hash),
      markerRead,
    ]).catch(async (err: unknown) => {
      await early;
      throw err;
    });
    if (!cached) cache.set(hash, record, now.getTime());
    if (!record || record.revoked || marker !== null) {
      await early;
      return { auth: null, alongside: null };
    }
    lastUsed.touch(record.id, now);
    const auth = identity(record);
    const outcome = early ?? (alongside ? settle(alongside(auth)) : null);
    return { auth, alongside: outcome ? await outcome : null };
  }

  return {
    async verify(plaintext) {
      return (await check(plaintext, undefined)).auth;
    },
    verifyAlongside(plaintext, alongside) {
      return check(plaintext, alongside);
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
