import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { RawSql } from '../batching/raw-sql';
import { createInvalidationChannel } from '../cache/invalidation';
import { lruCache } from '../cache/lru';
import { hashApiKey } from './api-key-hash';
import { type ApiKeyRecord, findApiKeyByHash } from './api-key-repo';
import { createLastUsedWriter, type LastUsedWriter } from './last-used-writer';
import type { ApiKeyAuthContext } from './types';

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
  /** The pool's raw SQL (the lookup and the last-used writes stay off Prisma: api-key-repo.ts). */
  sql: RawSql;
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
   * Starts checking a key and returns at once. `cached` is the key's identity
   * when this instance has it cached as valid, still to be confirmed: `result`
   * awaits the revocation read (and on a miss the database) and is the answer.
   * Store commands issued on `cached` in the same tick share the revocation
   * read's round trip (one write per turn: @platform/db redis-write-batching.ts);
   * see admission/key-and-limits.ts.
   */
  begin(plaintext: string): { cached: ApiKeyAuthContext | null; result: Promise<ApiKeyAuthContext | null> };
  /**
   * The key's identity when this instance has it cached as valid, with no
   * store read: the caller must still read the key's revocation marker
   * (`markerKey`) before answering, and then call `confirm` or `forget`
   * (admission/pending.ts folds that read into the budget reservation).
   */
  peek(plaintext: string): { identity: ApiKeyAuthContext; markerKey: string; hash: string } | null;
  /** The marker was absent: the key was used (last_used_at). */
  confirm(identity: ApiKeyAuthContext): void;
  /** The marker was present: drop the cached entry, so the next check reads the database. */
  forget(hash: string): void;
  /** Call after marking the row revoked: marker for every instance, local eviction, broadcast. */
  announceRevocation(hash: string): Promise<void>;
  /** Call after changing a key's rules or expiry: local eviction and broadcast, so instances re-read the row. */
  announceChange(hash: string): Promise<void>;
  /** Batched writer of api_keys.last_used_at. */
  readonly lastUsed: LastUsedWriter;
  close(): Promise<void>;
};

export function createApiKeyVerifier(opts: ApiKeyVerifierOptions): ApiKeyVerifier {
  // null is cached too (as { record: null }): repeated unknown keys cost the same as known ones and spare the DB.
  const cache = lruCache<string, { record: ApiKeyRecord | null }>({
    max: API_KEY_CACHE_MAX,
    ttlMs: API_KEY_CACHE_TTL_MS,
    clock: opts.clock,
  });
  const lastUsed = createLastUsedWriter({ sql: opts.sql, logger: opts.logger });
  // Eviction is an optimisation; the per-request marker read keeps revocation correct.
  const invalidation = createInvalidationChannel({
    kv: opts.kv,
    logger: opts.logger,
    channel: API_KEY_INVALIDATION_CHANNEL,
    drop: (hash) => cache.delete(hash),
  });

  const identity = (record: ApiKeyRecord): ApiKeyAuthContext => ({
    kind: 'api_key',
    userId: record.userId,
    apiKeyId: record.id,
    scope: record.scope,
    ...(record.rules ? { rules: record.rules } : {}),
    ...(record.expiresAt !== null ? { expiresAt: record.expiresAt } : {}),
  });

  function begin(plaintext: string): ReturnType<ApiKeyVerifier['begin']> {
    invalidation.ensureSubscribed();
    // Hash first and always do the same two lookups, so timing does not depend on the key.
    const hash = hashApiKey(plaintext, opts.pepper);
    const cached = cache.get(hash);
    const markerRead = opts.kv.get(revocationMarkerKey(hash));
    const result = Promise.all([cached ? cached.record : findApiKeyByHash(opts.sql, hash), markerRead]).then(
      ([record, marker]) => {
        if (!cached) cache.set(hash, { record });
        if (!record || record.revoked || marker !== null) return null;
        lastUsed.touch(record.id, opts.clock());
        return identity(record);
      },
    );
    return { cached: cached?.record && !cached.record.revoked ? identity(cached.record) : null, result };
  }

  function peek(plaintext: string): ReturnType<ApiKeyVerifier['peek']> {
    invalidation.ensureSubscribed();
    const hash = hashApiKey(plaintext, opts.pepper);
    const record = cache.get(hash)?.record;
    if (!record || record.revoked) return null;
    return { identity: identity(record), markerKey: revocationMarkerKey(hash), hash };
  }

  return {
    verify: (plaintext) => begin(plaintext).result,
    begin,
    peek,
    confirm: (id) => lastUsed.touch(id.apiKeyId, opts.clock()),
    forget: (hash) => cache.delete(hash),
    async announceRevocation(hash) {
      await opts.kv.set(revocationMarkerKey(hash), '1', REVOCATION_MARKER_TTL_MS);
      cache.delete(hash);
      await invalidation.publish(hash);
    },
    async announceChange(hash) {
      cache.delete(hash);
      await invalidation.publish(hash);
    },
    lastUsed,
    async close() {
      await lastUsed.close();
      await invalidation.close();
    },
  };
}
