import type { KeyValueStore } from '@platform/db';
import { consumeLimit } from '@platform/service-kit';
import type { RequestHandler } from 'express';

/**
 * Per-API-key limit on /api/v1: a fixed one-minute window in the key-value
 * store (Redis when REDIS_URL is set, so every instance shares it). Runs after
 * authentication and counts on the key's fingerprint, never on the key itself.
 * Over the limit: 429 `rate_limited` with Retry-After.
 */
export function apiRateLimit(options: { limitPerMinute: number; kv: KeyValueStore }): RequestHandler {
  const limit = { name: 'api', max: options.limitPerMinute, windowMs: 60_000 };
  return async (_req, res, next) => {
    await consumeLimit(options.kv, limit, `key:${String(res.locals.apiKeyId)}`);
    next();
  };
}
