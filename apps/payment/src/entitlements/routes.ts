import { type EntitlementsResponse, ZUserParams } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import { findCustomerByUserId } from '../customers/repo';
import type { SyncDeps } from '../subscriptions/sync';
import { findEntitlements } from './repo';
import { syncEntitlements } from './sync';

/**
 * `GET /api/v1/entitlements/{user_id}`: the user's active entitlements as
 * stored (kept by `entitlements.active_entitlement_summary.updated` events and
 * the reconciliation job). A customer whose entitlements were never read is
 * read from Stripe once; a user without a customer has none.
 */
export function createEntitlementRouter(deps: SyncDeps): Router {
  const router = Router();
  router.get('/entitlements/:user_id', async (req, res) => {
    const { user_id } = parseRequestPart(ZUserParams, req.params);
    let found = await findEntitlements(deps.prisma, user_id);
    if (!found.synced) {
      const customer = await findCustomerByUserId(deps.prisma, user_id);
      if (customer && !customer.deletedAt) {
        await syncEntitlements(deps, customer);
        found = await findEntitlements(deps.prisma, user_id);
      }
    }
    const body: EntitlementsResponse = {
      user_id,
      entitlements: found.entitlements.map((e) => ({ lookup_key: e.lookupKey, feature_id: e.featureId })),
    };
    res.json(body);
  });
  return router;
}
