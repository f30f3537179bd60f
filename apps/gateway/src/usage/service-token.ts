import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@platform/errors';
import type { RequestHandler } from 'express';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `Authorization: Bearer <GATEWAY_SERVICE_TOKEN>` for in-house services
 * (the billing shipper). No token configured -> 503 (the endpoint is off);
 * none sent -> 401; a wrong one -> 403. Compared in constant time.
 */
export function requireServiceToken(token: string | undefined): RequestHandler {
  const expected = token ? digest(token) : null;
  return (req, _res, next) => {
    if (!expected) throw new AppError('service_unavailable');
    const header = req.headers.authorization;
    if (!header?.startsWith('Bearer ')) throw new AppError('missing_authentication');
    if (!timingSafeEqual(digest(header.slice(7)), expected)) throw new AppError('forbidden');
    next();
  };
}
