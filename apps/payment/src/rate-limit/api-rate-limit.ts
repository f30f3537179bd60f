import { createRateLimitStore, type KeyValueStore } from '@platform/db';
import { rateLimitHandler } from '@platform/service-kit';
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';

const WINDOW_MS = 60_000;

/**
 * Per-API-key limit on /api/v1. Counters live in Redis on the key-value store's
 * own client when REDIS_URL is set (shared by every instance), in-process
 * otherwise. Runs after
 * authentication and keys on the key's fingerprint, never on the key itself.
 * Over the limit: 429 `rate_limited` with Retry-After.
 */
export function apiRateLimit(options: { limitPerMinute: number; kv: KeyValueStore }): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: options.limitPerMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: createRateLimitStore(options.kv, { prefix: 'rl:api:' }),
    keyGenerator: (_req, res) => `key:${String(res.locals.apiKeyId)}`,
    handler: rateLimitHandler,
  });
}
