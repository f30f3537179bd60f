import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@platform/errors';
import type { RequestHandler } from 'express';

/** Header that carries the caller's API key (spec: `X-API-Key: <API_KEY>`). */
export const API_KEY_HEADER = 'x-api-key';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * True when `presented` equals one of `accepted`. Both sides are hashed first so
 * the compared buffers always have equal length (timingSafeEqual requires it and
 * a length check would leak the key length), and every configured key is
 * compared, so the time does not tell which key matched or how many there are.
 */
export function matchesAnyKey(presented: string, accepted: readonly Buffer[]): boolean {
  const candidate = digest(presented);
  let matched = false;
  for (const key of accepted) {
    if (timingSafeEqual(candidate, key)) matched = true;
  }
  return matched;
}

/**
 * Stable, non-reversible label of an API key, safe for rate-limit keys and logs
 * (the raw key never leaves this module).
 */
export function fingerprintApiKey(key: string): string {
  return digest(key).toString('hex').slice(0, 16);
}

/**
 * Refuses a request without a valid X-API-Key: 401 `missing api key` when the
 * header is absent or empty, 401 `invalid api key` when no configured key
 * matches. Several keys may be configured so they can be rotated without downtime.
 * On success `res.locals.apiKeyId` holds the key's fingerprint.
 */
export function requireApiKey(keys: readonly string[]): RequestHandler {
  if (keys.length === 0) throw new Error('requireApiKey needs at least one key');
  const accepted = keys.map(digest);
  return (req, res, next) => {
    const header = req.headers[API_KEY_HEADER];
    const presented = Array.isArray(header) ? header[0] : header;
    if (presented === undefined || presented.trim() === '') {
      next(new AppError('missing_api_key'));
      return;
    }
    if (!matchesAnyKey(presented, accepted)) {
      next(new AppError('invalid_api_key'));
      return;
    }
    res.locals.apiKeyId = fingerprintApiKey(presented);
    next();
  };
}
