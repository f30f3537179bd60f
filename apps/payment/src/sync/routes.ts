import { ZUserParams } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import type { SyncDeps } from '../subscriptions/sync';
import { syncUser } from './sync-user';

/**
 * `POST /api/v1/sync/{user_id}`: the calling app's success page calls it after
 * Stripe redirects back, so what the user just paid for is stored before any
 * webhook arrives.
 */
export function createSyncRouter(deps: SyncDeps): Router {
  const router = Router();
  router.post('/sync/:user_id', async (req, res) => {
    const { user_id } = parseRequestPart(ZUserParams, req.params);
    res.json(await syncUser(deps, user_id));
  });
  return router;
}
