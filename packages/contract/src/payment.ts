import { z } from 'zod';
import { WELL_FORMED, ZEmail, ZHttpUrl, ZIsoTimestamp } from './common';

/** The identifiers the service passes on to Stripe: 1 to 255 characters of well-formed text. */
const ZIdentifier = z
  .string()
  .min(1)
  .max(255)
  .refine(...WELL_FORMED);

/** The user id of the calling application: 1 to 255 characters. */
export const ZUserId = ZIdentifier.meta({
  description: 'Identifier of the user in the calling application.',
  example: 'user_42',
});

/** A Stripe object id (product, price, session): 1 to 255 characters. */
export const ZStripeId = ZIdentifier;

const ZProductId = ZStripeId.meta({ description: 'Stripe product id.', example: 'prod_Qx12AbCd' });
const ZPriceId = ZStripeId.meta({ description: 'Stripe price id.', example: 'price_1Qx12AbCd' });

/** Stripe accepts quantities up to 999999 per line item. */
export const MAX_QUANTITY = 999_999;
/** Stripe Checkout accepts at most 100 line items per session. */
export const MAX_CART_ITEMS = 100;

const ZQuantity = z.number().int().min(1).max(MAX_QUANTITY);

/** Who pays: the fields every checkout request starts with. */
const customer = { user_id: ZUserId, email: ZEmail };

const urls = {
  success_url: ZHttpUrl.meta({ description: 'Where the customer is sent after paying.' }),
  cancel_url: ZHttpUrl.meta({ description: 'Where the customer is sent after cancelling.' }),
};

/** `POST /api/v1/checkout/subscription`. The price must be recurring and belong to the product. */
export const ZCreateSubscriptionCheckoutRequest = z
  .object({ ...customer, product_id: ZProductId, price_id: ZPriceId, ...urls })
  .meta({ id: 'CreateSubscriptionCheckoutRequest' });
export type CreateSubscriptionCheckoutRequest = z.infer<typeof ZCreateSubscriptionCheckoutRequest>;

/** `POST /api/v1/checkout/item`: one price, `quantity` defaults to 1. */
export const ZCreateItemCheckoutRequest = z
  .object({
    ...customer,
    price_id: ZPriceId.meta({ description: 'Stripe price id; it determines what is purchased.' }),
    quantity: ZQuantity.default(1).meta({ description: 'Units to buy, 1 to 999999.' }),
    ...urls,
  })
  .meta({ id: 'CreateItemCheckoutRequest' });
export type CreateItemCheckoutRequest = z.infer<typeof ZCreateItemCheckoutRequest>;

/** One line of a cart; both fields are required (the spec's element rule). */
export const ZCartItem = z
  .object({ price_id: ZPriceId, quantity: ZQuantity.meta({ description: 'Units to buy, 1 to 999999.' }) })
  .meta({ id: 'CartItem' });
export type CartItem = z.infer<typeof ZCartItem>;

/** `POST /api/v1/checkout/cart`: 1 to 100 items in one session. */
export const ZCreateCartCheckoutRequest = z
  .object({
    ...customer,
    items: z.array(ZCartItem).min(1).max(MAX_CART_ITEMS),
    ...urls,
  })
  .meta({ id: 'CreateCartCheckoutRequest' });
export type CreateCartCheckoutRequest = z.infer<typeof ZCreateCartCheckoutRequest>;

/** A Stripe-hosted page the caller sends its user to, as Stripe returned it (not checked like `ZHttpUrl`). */
function stripePageUrl(description: string, example: string) {
  return z.string().meta({ format: 'uri', description, example });
}

/** Response of all three checkout endpoints. */
export const ZCheckoutSessionResponse = z
  .object({
    checkout_session_id: z.string().meta({ example: 'cs_test_a1B2c3' }),
    checkout_url: stripePageUrl(
      'Hosted payment page; redirect the customer here.',
      'https://checkout.stripe.com/c/pay/cs_test_a1B2c3',
    ),
  })
  .meta({ id: 'CheckoutSessionResponse' });
export type CheckoutSessionResponse = z.infer<typeof ZCheckoutSessionResponse>;

/** The subscription states of the spec; `none` means no subscription exists. */
export const SUBSCRIPTION_STATUSES = [
  'active',
  'canceled',
  'incomplete',
  'incomplete_expired',
  'past_due',
  'trialing',
  'unpaid',
  'none',
] as const;
export const ZSubscriptionStatus = z.enum(SUBSCRIPTION_STATUSES).meta({ id: 'SubscriptionStatus' });
export type SubscriptionStatus = z.infer<typeof ZSubscriptionStatus>;

/** Path parameters of `GET /api/v1/subscriptions/{user_id}/{product_id}`. */
export const ZSubscriptionStatusParams = z.object({ user_id: ZUserId, product_id: ZProductId });
export type SubscriptionStatusParams = z.infer<typeof ZSubscriptionStatusParams>;

/** Subscription status of a user for a product. */
export const ZSubscriptionStatusResponse = z
  .object({
    status: ZSubscriptionStatus,
    subscription_id: z.string().meta({ description: 'Empty when status is none.', example: 'sub_1Qx12AbCd' }),
    current_period_end: ZIsoTimestamp.meta({
      description: 'End of the current billing period; 0001-01-01T00:00:00Z when status is none.',
      example: '2026-12-21T10:00:00Z',
    }),
    product_id: z.string().meta({ description: 'Empty when status is none.', example: 'prod_Qx12AbCd' }),
  })
  .meta({ id: 'SubscriptionStatusResponse' });
export type SubscriptionStatusResponse = z.infer<typeof ZSubscriptionStatusResponse>;

/** The exact body returned when no subscription exists (the spec's `none` form). */
export const SUBSCRIPTION_NONE: SubscriptionStatusResponse = Object.freeze({
  status: 'none',
  subscription_id: '',
  current_period_end: '0001-01-01T00:00:00Z',
  product_id: '',
});

/** `POST /api/v1/portal`. */
export const ZCreatePortalSessionRequest = z
  .object({
    user_id: ZUserId,
    return_url: ZHttpUrl.meta({ description: 'Where the user returns to from the portal.' }),
  })
  .meta({ id: 'CreatePortalSessionRequest' });
export type CreatePortalSessionRequest = z.infer<typeof ZCreatePortalSessionRequest>;

export const ZPortalSessionResponse = z
  .object({
    portal_url: stripePageUrl(
      'Customer portal; redirect the user here.',
      'https://billing.stripe.com/p/session/test_YWNjdF8x',
    ),
  })
  .meta({ id: 'PortalSessionResponse' });
export type PortalSessionResponse = z.infer<typeof ZPortalSessionResponse>;

/**
 * Optional `Idempotency-Key` header of the checkout and portal calls: a retry
 * with the same key and body returns the first result instead of a second session.
 */
export const ZIdempotencyKey = z.string().min(1).max(255).meta({
  description:
    'Optional. A retry with the same key and the same body returns the first result; the same key with a different body is refused with 409.',
  example: '0b6a2c1e-5d4f-4e8a-9f3b-7c2d1e0a9b8c',
});

/**
 * Body of `POST /webhooks/stripe` as far as the service reads it; Stripe sends more.
 * A signed body of another shape is refused (422) before anything reads it.
 */
export const ZStripeWebhookEvent = z
  .looseObject({
    id: z
      .string()
      .min(1)
      .max(255)
      .refine(...WELL_FORMED)
      .meta({ example: 'evt_1Qx12AbCd' }),
    type: z
      .string()
      .max(255)
      .refine(...WELL_FORMED)
      .meta({ example: 'customer.subscription.updated' }),
    created: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Unix time in seconds.', example: 1763719200 }),
    data: z.looseObject({ object: z.looseObject({}) }),
  })
  .meta({ id: 'StripeWebhookEvent', description: 'A Stripe event, verified against the raw body.' });

export const ZStripeWebhookAck = z.object({ received: z.literal(true) }).meta({ id: 'StripeWebhookAck' });
export type StripeWebhookAck = z.infer<typeof ZStripeWebhookAck>;
