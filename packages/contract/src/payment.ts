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
export type CreateSubscriptionCheckoutInput = z.input<typeof ZCreateSubscriptionCheckoutRequest>;

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
export type CreateItemCheckoutInput = z.input<typeof ZCreateItemCheckoutRequest>;

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
export type CreateCartCheckoutInput = z.input<typeof ZCreateCartCheckoutRequest>;

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
export type CreatePortalSessionInput = z.input<typeof ZCreatePortalSessionRequest>;

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

/** Path parameter of the per-user endpoints (purchases, entitlements, sync). */
export const ZUserParams = z.object({ user_id: ZUserId });
export type UserParams = z.infer<typeof ZUserParams>;

/** What became of a one-time purchase; the most serious state wins (a dispute, then refunds, then the payment). */
export const PURCHASE_STATUSES = [
  'paid',
  'pending',
  'failed',
  'refunded',
  'partially_refunded',
  'disputed',
] as const;
export const ZPurchaseStatus = z.enum(PURCHASE_STATUSES).meta({
  id: 'PurchaseStatus',
  description:
    '`paid`; `pending` (an async method such as a bank debit has not settled); `failed` (it did not); `refunded` / `partially_refunded`; `disputed` (an open or lost dispute).',
});
export type PurchaseStatus = z.infer<typeof ZPurchaseStatus>;

export const ZPurchaseItem = z
  .object({
    price_id: z.string().meta({ example: 'price_1Qx12AbCd' }),
    product_id: z.string().meta({ example: 'prod_Qx12AbCd' }),
    quantity: z.number().int(),
    amount_total: z.number().int().meta({ description: 'In the smallest currency unit.', example: 1500 }),
  })
  .meta({ id: 'PurchaseItem' });

export const ZPurchase = z
  .object({
    purchase_id: z
      .string()
      .meta({ description: 'The Stripe Checkout session id.', example: 'cs_test_a1B2c3' }),
    status: ZPurchaseStatus,
    amount_total: z.number().int().meta({ description: 'In the smallest currency unit.', example: 1500 }),
    amount_refunded: z.number().int().meta({ example: 0 }),
    currency: z.string().meta({ example: 'usd' }),
    created_at: ZIsoTimestamp,
    items: z.array(ZPurchaseItem),
  })
  .meta({ id: 'Purchase' });
export type Purchase = z.infer<typeof ZPurchase>;

/** `GET /api/v1/purchases/{user_id}`: the user's one-time purchases, newest first (at most 100). */
export const ZPurchasesResponse = z
  .object({ user_id: z.string(), purchases: z.array(ZPurchase) })
  .meta({ id: 'PurchasesResponse' });
export type PurchasesResponse = z.infer<typeof ZPurchasesResponse>;

/** `GET /api/v1/entitlements/{user_id}`: the features the user's payments grant, by lookup key. */
export const ZEntitlementsResponse = z
  .object({
    user_id: z.string(),
    entitlements: z
      .array(
        z.object({
          lookup_key: z
            .string()
            .meta({ description: 'The Stripe feature lookup key.', example: 'pro_models' }),
          feature_id: z.string().meta({ example: 'feat_61Qx12AbCd' }),
        }),
      )
      .meta({ description: 'Sorted by lookup_key; empty when the user has none.' }),
  })
  .meta({ id: 'EntitlementsResponse' });
export type EntitlementsResponse = z.infer<typeof ZEntitlementsResponse>;

/** `POST /api/v1/sync/{user_id}`: what the service holds for the user after reading it from Stripe. */
export const ZSyncResponse = z
  .object({
    user_id: z.string(),
    synced_at: ZIsoTimestamp,
    subscriptions: z.array(
      z.object({
        subscription_id: z.string(),
        status: ZSubscriptionStatus,
        product_ids: z.array(z.string()),
      }),
    ),
    entitlements: z.array(z.string()).meta({ description: 'Active feature lookup keys.' }),
    purchases: z.number().int().meta({ description: 'Completed one-time purchases read from Stripe.' }),
  })
  .meta({ id: 'SyncResponse' });
export type SyncResponse = z.infer<typeof ZSyncResponse>;
