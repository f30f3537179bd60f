import { AppError } from '@platform/errors';
import type { Request, RequestHandler } from 'express';
import type { GatewayEnv } from '../env';
import { trustedOrigins } from '../http/origins';
import type { AuthContext } from './types';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for state-changing requests authenticated by the session
 * cookie: the Origin header must be the gateway's own origin or one on
 * GATEWAY_CORS_ORIGINS, otherwise 403 `csrf_origin` (also when Origin is
 * missing: every current browser sends it on POST/PUT/PATCH/DELETE).
 *
 * Place it after `authenticate(...)`. Requests authenticated by `x-api-key`
 * are exempt: a browser cannot attach that header cross-site without a CORS
 * preflight, and the cookie plays no part in them. Used before any auth
 * middleware, it checks every request that carries no `x-api-key`.
 */
export function requireTrustedOrigin(deps: {
  env: Pick<GatewayEnv, 'GATEWAY_PUBLIC_URL' | 'GATEWAY_CORS_ORIGINS'>;
}): RequestHandler {
  const allowed = trustedOrigins(deps.env);
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const auth = res.locals.auth as AuthContext | undefined;
    const exempt = auth ? auth.kind === 'api_key' : typeof req.headers['x-api-key'] === 'string';
    if (exempt) return next();
    assertTrustedOrigin(req, allowed);
    next();
  };
}

/** 403 `csrf_origin` unless the request's Origin is in `allowed`. */
export function assertTrustedOrigin(req: Request, allowed: Set<string>): void {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !allowed.has(origin)) throw new AppError('csrf_origin');
}
