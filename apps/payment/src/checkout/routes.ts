import {
  ZCreateCartCheckoutRequest,
  ZCreateItemCheckoutRequest,
  ZCreateSubscriptionCheckoutRequest,
} from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import { readIdempotencyHeader } from '../idempotency';
import {
  type CheckoutDeps,
  createCartCheckout,
  createItemCheckout,
  createSubscriptionCheckout,
} from './create-checkout';

/** The three checkout endpoints under /api/v1. */
export function createCheckoutRouter(deps: CheckoutDeps): Router {
  const router = Router();
  router.post('/checkout/subscription', async (req, res) => {
    const body = parseRequestPart(ZCreateSubscriptionCheckoutRequest, req.body);
    const key = readIdempotencyHeader(req.headers['idempotency-key']);
    res.json(await createSubscriptionCheckout(deps, body, key));
  });
  router.post('/checkout/item', async (req, res) => {
    const body = parseRequestPart(ZCreateItemCheckoutRequest, req.body);
    const key = readIdempotencyHeader(req.headers['idempotency-key']);
    res.json(await createItemCheckout(deps, body, key));
  });
  router.post('/checkout/cart', async (req, res) => {
    const body = parseRequestPart(ZCreateCartCheckoutRequest, req.body);
    const key = readIdempotencyHeader(req.headers['idempotency-key']);
    res.json(await createCartCheckout(deps, body, key));
  });
  return router;
}
