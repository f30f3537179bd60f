import { type PurchasesResponse, ZUserParams } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import type { PaymentDeps } from '../deps';
import { formatTimestamp } from '../subscriptions/status';
import { listPurchases } from './repo';
import { purchaseStatus } from './status';

/** `GET /api/v1/purchases/{user_id}`: the user's one-time purchases, from the database (webhooks and reconciliation keep it). */
export function createPurchaseRouter(deps: Pick<PaymentDeps, 'prisma'>): Router {
  const router = Router();
  router.get('/purchases/:user_id', async (req, res) => {
    const { user_id } = parseRequestPart(ZUserParams, req.params);
    const rows = await listPurchases(deps.prisma, user_id);
    const body: PurchasesResponse = {
      user_id,
      purchases: rows.map((p) => ({
        purchase_id: p.id,
        status: purchaseStatus(p),
        amount_total: p.amountTotal,
        amount_refunded: p.amountRefunded,
        currency: p.currency,
        created_at: formatTimestamp(p.stripeCreatedAt),
        items: p.items.map((i) => ({
          price_id: i.priceId,
          product_id: i.productId,
          quantity: i.quantity,
          amount_total: i.amountTotal,
        })),
      })),
    };
    res.json(body);
  });
  return router;
}
