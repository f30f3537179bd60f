import type { KeyValueStore } from '@platform/db';
import { rateLimitHandler } from '@platform/errors';
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { createKvRateLimitStore } from './kv-rate-limit-store';

const WINDOW_MS = 60_000;

/**
 * Per-API-key limit on /api/v1, counted in the key-value store (Redis when
 * REDIS_URL is set, so every instance shares the counters; in-process otherwise). Runs after
 * authentication and keys on the key's fingerprint, never on the key itself.
 * Over the limit: 429 `rate_limited` with Retry-After.
 */
export function apiRateLimit(options: { limitPerMinute: number; kv: KeyValueStore }): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: options.limitPerMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: createKvRateLimitStore(options.kv, 'rate:api:'),
    keyGenerator: (_req, res) => `key:${String(res.locals.apiKeyId)}`,
    handler: rateLimitHandler,
  });
}
