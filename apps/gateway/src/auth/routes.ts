import type { SessionResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import { Router } from 'express';
import { trustedOrigins } from '../http/origins';
import { authenticate, requireAuthOf } from './api-key-auth';
import { readCookie } from './cookies';
import { assertTrustedOrigin } from './csrf';
import type { AuthDeps } from './deps';
import { endSession, type SessionDeps } from './sessions';

/** The signed-in session: read it, end it. Signing in is sign-in/routes.ts. */
export function createSessionRouter(deps: AuthDeps): Router {
  const router = Router();
  const sessionDeps: SessionDeps = { env: deps.env, prisma: deps.prisma, clock: deps.clock };
  const allowedOrigins = trustedOrigins(deps.env);

  router.get('/api/v1/auth/session', authenticate(deps, { allow: ['session'] }), (_req, res) => {
    const auth = requireAuthOf(res);
    if (auth.kind !== 'session') throw new AppError('missing_authentication');
    res.json({
      user_id: auth.userId,
      email: auth.email,
      expires_at: auth.expiresAt.toISOString(),
      created_at: auth.createdAt.toISOString(),
    } satisfies SessionResponse);
  });

  router.post('/api/v1/auth/logout', async (req, res) => {
    // Only a request that carries the cookie can change anything, so only it needs the Origin check.
    if (readCookie(req, deps.env.SESSION_COOKIE_NAME) !== undefined) assertTrustedOrigin(req, allowedOrigins);
    await endSession(sessionDeps, req, res);
    res.json({ logged_out: true });
  });

  return router;
}
