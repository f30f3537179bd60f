import { ZStripeWebhookEvent } from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import express, { Router } from 'express';
import type Stripe from 'stripe';
import type { PaymentEnv } from '../env';
import type { SyncDeps } from '../subscriptions/sync';
import { handleStripeEvent } from './handle-event';

/** Stripe events are small; this is far above any real one and still bounds memory. */
const WEBHOOK_BODY_LIMIT = '512kb';

export type WebhookDeps = SyncDeps & { env: Pick<PaymentEnv, 'STRIPE_WEBHOOK_SECRET'> };

/**
 * `POST /webhooks/stripe`. Mounted before any JSON parser: the signature is
 * computed over the exact bytes Stripe sent, so the body is read raw whatever
 * its content type. Without STRIPE_WEBHOOK_SECRET every delivery is refused
 * with 503 (Stripe retries), never accepted unverified.
 */
export function createWebhookRouter(deps: WebhookDeps): Router {
  const router = Router();
  router.post(
    '/webhooks/stripe',
    express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT }),
    async (req, res) => {
      const secret = deps.env.STRIPE_WEBHOOK_SECRET;
      if (!secret)
        throw new AppError('service_unavailable', { message: 'stripe webhooks are not configured' });
      const signature = req.headers['stripe-signature'];
      if (typeof signature !== 'string' || !Buffer.isBuffer(req.body))
        throw new AppError('webhook_signature_invalid');
      let event: Stripe.Event;
      try {
        event = deps.stripe.webhooks.constructEvent(req.body, signature, secret);
      } catch (err) {
        throw new AppError('webhook_signature_invalid', { cause: err });
      }
      // Signed is not the same as well-formed: the handler reads these fields.
      parseRequestPart(ZStripeWebhookEvent, event);
      const outcome = await handleStripeEvent(deps, event);
      deps.logger.info({ eventId: event.id, type: event.type, outcome }, 'stripe event');
      res.json({ received: true });
    },
  );
  return router;
}
