import { ZSubscriptionStatusParams } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import type { SubscriptionStatusReader } from './get-status';

/** `GET /api/v1/subscriptions/{user_id}/{product_id}`. */
export function createSubscriptionRouter(reader: SubscriptionStatusReader): Router {
  const router = Router();
  router.get('/subscriptions/:user_id/:product_id', async (req, res) => {
    const params = parseRequestPart(ZSubscriptionStatusParams, req.params);
    res.json(await reader.getStatus({ userId: params.user_id, productId: params.product_id }));
  });
  return router;
}
