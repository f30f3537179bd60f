import { ZSubscriptionChangeRequest } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import type { Billing } from './billing';

/**
 * `POST /api/v1/billing/subscription-changes {"user_id"}`: payment's notice
 * (after a Stripe webhook changed the user's subscription) that the cached
 * subscription status of the user is stale; every gateway instance forgets
 * it. `service` is the service-token check (GATEWAY_SERVICE_TOKEN). 204.
 */
export function createBillingRouter(opts: {
  billing: Billing;
  service: RequestHandler;
  json: RequestHandler;
}): Router {
  const router = Router();
  router.post('/api/v1/billing/subscription-changes', opts.service, opts.json, async (req, res) => {
    const { user_id: userId } = parseRequestPart(ZSubscriptionChangeRequest, req.body);
    await opts.billing.subscriptionChanged(userId);
    res.status(204).end();
  });
  return router;
}
