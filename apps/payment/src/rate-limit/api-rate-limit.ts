import type { KeyValueStore } from '@platform/db';
import { createWindowLimit } from '@platform/service-kit';
import type { RequestHandler } from 'express';

/**
 * Per-API-key limit on /api/v1: a fixed one-minute window in the key-value
 * store (Redis when REDIS_URL is set, so every instance shares it). Runs after
 * authentication and counts on the key's fingerprint, never on the key itself.
 * Answers carry the draft-8 `RateLimit` headers; over the limit: 429
 * `rate_limited` with Retry-After.
 */
export function apiRateLimit(options: { limitPerMinute: number; kv: KeyValueStore }): RequestHandler {
  return createWindowLimit({
    kv: options.kv,
    limit: { name: 'api', max: options.limitPerMinute, windowMs: 60_000 },
    keyOf: (_req, res) => `key:${String(res.locals.apiKeyId)}`,
  });
}
