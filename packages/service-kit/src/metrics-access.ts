import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { AppError } from '@platform/errors';
import type { RequestHandler } from 'express';

const digest = (s: string) => createHash('sha256').update(s).digest();

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}

/**
 * Who may read `GET /metrics` (Node version, route counters, provider names).
 * With `token` (`METRICS_TOKEN`): only a request with `Authorization: Bearer
 * <token>`, compared in constant time. Without: only a client on this machine
 * that came straight to the socket (loopback, no X-Forwarded-For), which keeps
 * `curl localhost/metrics` working in development while a proxy on the same host
 * cannot pass an outside request through. Everyone else gets the JSON 404 an
 * unknown path gets, so the endpoint does not show it exists.
 */
export function metricsAccess(token: string | undefined): RequestHandler {
  const expected = token ? digest(`Bearer ${token}`) : undefined;
  return (req, _res, next) => {
    const allowed = expected
      ? timingSafeEqual(digest(req.get('authorization') ?? ''), expected)
      : isLoopback(req.socket.remoteAddress) && req.get('x-forwarded-for') === undefined;
    if (!allowed) throw new AppError('not_found');
    next();
  };
}
