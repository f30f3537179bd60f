import { ZCreatePortalSessionRequest } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import { readIdempotencyHeader } from '../idempotency';
import { createPortalSession, type PortalDeps } from './create-portal-session';

/** `POST /api/v1/portal`. */
export function createPortalRouter(deps: PortalDeps): Router {
  const router = Router();
  router.post('/portal', async (req, res) => {
    const body = parseRequestPart(ZCreatePortalSessionRequest, req.body);
    const key = readIdempotencyHeader(req.headers['idempotency-key']);
    res.json(await createPortalSession(deps, body, key));
  });
  return router;
}
