import { createHmac } from 'node:crypto';
import type { StripeObject } from './objects';
import { makeId } from './store';

/** API version stamped on built events; the one stripe-node 23.1.0 pins. */
export const FAKE_STRIPE_API_VERSION = '2026-10-28.endive';

/** A Stripe event envelope as delivered to a webhook endpoint. */
export type StripeEventEnvelope<T = unknown> = StripeObject<'event'> & {
  api_version: string;
  created: number;
  data: { object: T; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
};

/**
 * Builds the `Stripe-Signature` header exactly as Stripe signs deliveries:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the endpoint secret>`.
 * Sign the exact bytes you send; re-serialising JSON breaks the signature, as with real Stripe.
 */
export function signWebhookPayload(
  payload: string | Buffer,
  secret: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  const signature = createHmac('sha256', secret)
    .update(`${timestamp}.`)
    .update(typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload)
    .digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

/** Wraps `object` in an event envelope, e.g. `buildEvent('customer.subscription.updated', sub)`. */
export function buildEvent<T>(
  type: string,
  object: T,
  opts: {
    id?: string;
    created?: number;
    previousAttributes?: Record<string, unknown>;
    apiVersion?: string;
  } = {},
): StripeEventEnvelope<T> {
  return {
    id: opts.id ?? makeId('evt', 24),
    object: 'event',
    api_version: opts.apiVersion ?? FAKE_STRIPE_API_VERSION,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    data: {
      object: structuredClone(object),
      ...(opts.previousAttributes ? { previous_attributes: opts.previousAttributes } : {}),
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}
