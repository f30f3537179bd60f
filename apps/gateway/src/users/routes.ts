import type { MeResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import { Router } from 'express';
import { authenticate, requireAuthOf } from '../auth/api-key-auth';
import type { AuthDeps } from '../auth/deps';
import { findUserById } from './repo';

/** `GET /api/v1/me`: the profile, by session cookie or x-api-key. */
export function createUserRouter(deps: AuthDeps): Router {
  const router = Router();
  router.get('/api/v1/me', authenticate(deps, { allow: ['session', 'api_key'] }), async (_req, res) => {
    const auth = requireAuthOf(res);
    const user = await findUserById(deps.prisma, auth.userId);
    if (!user) throw new AppError('missing_authentication');
    res.json({
      id: user.id,
      email: user.email,
      created_at: user.createdAt.toISOString(),
      auth: auth.kind,
    } satisfies MeResponse);
  });
  return router;
}
