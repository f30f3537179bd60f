import type {
  CheckoutSessionResponse,
  CreateCartCheckoutRequest,
  CreateItemCheckoutRequest,
  CreateSubscriptionCheckoutRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import type Stripe from 'stripe';
import { withCustomer } from '../customers/ensure-customer';
import { clearCheckoutPending, markCheckoutPending } from '../customers/repo';
import type { PaymentDeps } from '../deps';
import { scopeIdempotencyKey } from '../idempotency';
import { findEntitlingSubscription } from '../subscriptions/repo';
import { syncCustomerSubscriptions } from '../subscriptions/sync';
import { mergeCartItems, resolveCartMode } from './cart';
import { isRecurring, loadPrices, productIdOf } from './prices';
import { assertRedirectsAllowed } from './redirects';

export type CheckoutDeps = Pick<PaymentDeps, 'env' | 'kv' | 'logger' | 'prisma' | 'stripe' | 'now'>;

type Common = { user_id: string; email: string; success_url: string; cancel_url: string };

type SessionPlan = {
  mode: 'payment' | 'subscription';
  /** No quantity for a metered price: Stripe refuses one (the meter says how much). */
  lineItems: Array<{ price: string; quantity?: number }>;
  metadata: Record<string, string>;
  /** Products of the recurring prices: a user already entitled to one of them is refused (409). */
  subscribedProducts: string[];
};

/**
 * Refuses a second subscription: reads the customer's subscriptions from
 * Stripe (a webhook may not have arrived yet) and answers 409
 * `subscription_exists` when one that entitles (active, trialing, past_due)
 * has an item of one of the products. Two checkouts racing each other can both
 * pass; Stripe's "limit customers to one subscription" setting closes that gap
 * (docs/payment.md).
 */
async function assertNotSubscribed(
  deps: CheckoutDeps,
  customer: { userId: string; stripeCustomerId: string },
  productIds: readonly string[],
): Promise<void> {
  if (productIds.length === 0) return;
  await syncCustomerSubscriptions(deps, customer);
  const existing = await findEntitlingSubscription(deps.prisma, customer.userId, productIds);
  if (existing) {
    throw new AppError('subscription_exists', {
      details: [
        {
          path: 'product_id',
          message: `subscription ${existing.subscriptionId} to ${existing.productId} is ${existing.status}; send the user to the portal (POST /api/v1/portal) to change it`,
        },
      ],
    });
  }
}

/**
 * The steps every checkout shares: redirect allowlist, idempotency, prices
 * (checked by `plan` before a customer is created, so a rejected request
 * leaves nothing behind), customer, session.
 */
async function runCheckout(
  deps: CheckoutDeps,
  kind: 'subscription' | 'item' | 'cart',
  body: Common,
  clientKey: string | undefined,
  plan: () => Promise<SessionPlan>,
): Promise<CheckoutSessionResponse> {
  assertRedirectsAllowed(
    { success_url: body.success_url, cancel_url: body.cancel_url },
    deps.env.PAYMENT_ALLOWED_REDIRECT_HOSTS,
  );
  const idempotency = await scopeIdempotencyKey(deps.kv, {
    operation: `checkout-${kind}`,
    userId: body.user_id,
    clientKey,
    body,
  });
  const { mode, lineItems, metadata, subscribedProducts } = await plan();
  const session = await withCustomer(
    deps,
    { userId: body.user_id, email: body.email },
    async (customer, created) => {
      if (mode === 'subscription') {
        if (!created)
          await assertNotSubscribed(
            deps,
            { userId: body.user_id, stripeCustomerId: customer },
            subscribedProducts,
          );
        // Until this checkout's outcome is known, a `none` status is re-read from Stripe, never served from the database.
        const markedAt = deps.now();
        await markCheckoutPending(deps.prisma, body.user_id, markedAt);
        try {
          return await createSession(deps, mode, customer, body, lineItems, metadata, idempotency.stripeKey);
        } catch (err) {
          // No session, so no outcome to wait for (a later checkout's mark is newer and stays).
          await clearCheckoutPending(deps.prisma, body.user_id, markedAt);
          throw err;
        }
      }
      return createSession(deps, mode, customer, body, lineItems, metadata, idempotency.stripeKey);
    },
  );
  if (!session.url) throw new Error(`checkout session ${session.id} has no url`);
  await idempotency.remember();
  return { checkout_session_id: session.id, checkout_url: session.url };
}

/** Creates the Stripe Checkout session; a Stripe error is rethrown as Stripe's, for withCustomer to inspect. */
function createSession(
  deps: CheckoutDeps,
  mode: SessionPlan['mode'],
  customer: string,
  body: Common,
  lineItems: SessionPlan['lineItems'],
  metadata: Record<string, string>,
  idempotencyKey: string | undefined,
): Promise<Stripe.Checkout.Session> {
  const params: Stripe.Checkout.SessionCreateParams = {
    mode,
    customer,
    client_reference_id: body.user_id,
    line_items: lineItems,
    success_url: body.success_url,
    cancel_url: body.cancel_url,
    metadata,
    ...(mode === 'subscription'
      ? { subscription_data: { metadata } }
      : { payment_intent_data: { metadata } }),
  };
  return deps.stripe.checkout.sessions.create(params, idempotencyKey ? { idempotencyKey } : undefined);
}

/** `POST /api/v1/checkout/subscription`: the price must exist, be recurring and belong to product_id. */
export function createSubscriptionCheckout(
  deps: CheckoutDeps,
  body: CreateSubscriptionCheckoutRequest,
  clientKey?: string,
): Promise<CheckoutSessionResponse> {
  return runCheckout(deps, 'subscription', body, clientKey, async () => {
    const prices = await loadPrices(deps.stripe, [{ priceId: body.price_id, path: 'price_id' }]);
    const price = prices.get(body.price_id)!;
    if (!isRecurring(price)) throw new AppError('price_not_recurring');
    if (productIdOf(price) !== body.product_id) throw new AppError('price_product_mismatch');
    return {
      mode: 'subscription',
      lineItems: [
        price.recurring?.usage_type === 'metered' ? { price: price.id } : { price: price.id, quantity: 1 },
      ],
      metadata: { user_id: body.user_id, product_id: body.product_id },
      subscribedProducts: [body.product_id],
    };
  });
}

/** `POST /api/v1/checkout/item`: a recurring price makes it a subscription, a one-time price a payment. */
export function createItemCheckout(
  deps: CheckoutDeps,
  body: CreateItemCheckoutRequest,
  clientKey?: string,
): Promise<CheckoutSessionResponse> {
  return runCheckout(deps, 'item', body, clientKey, async () => {
    const prices = await loadPrices(deps.stripe, [{ priceId: body.price_id, path: 'price_id' }]);
    const price = prices.get(body.price_id)!;
    const recurring = isRecurring(price);
    return {
      mode: recurring ? 'subscription' : 'payment',
      lineItems: [{ price: price.id, quantity: body.quantity }],
      metadata: { user_id: body.user_id, product_id: productIdOf(price) },
      subscribedProducts: recurring ? [productIdOf(price)] : [],
    };
  });
}

/**
 * `POST /api/v1/checkout/cart`: one session for several prices. Lines with the
 * same price are merged (quantities added); any recurring price makes it a
 * subscription checkout, whose line-item limits are then checked.
 */
export function createCartCheckout(
  deps: CheckoutDeps,
  body: CreateCartCheckoutRequest,
  clientKey?: string,
): Promise<CheckoutSessionResponse> {
  return runCheckout(deps, 'cart', body, clientKey, async () => {
    const items = mergeCartItems(body.items);
    const prices = await loadPrices(
      deps.stripe,
      items.map((item) => ({ priceId: item.price_id, path: `items.${item.index}.price_id` })),
    );
    const resolved = items.map((item) => prices.get(item.price_id)!);
    const mode = resolveCartMode(resolved);
    return {
      mode,
      lineItems: items.map((item) => ({ price: item.price_id, quantity: item.quantity })),
      metadata: { user_id: body.user_id },
      subscribedProducts: [...new Set(resolved.filter(isRecurring).map(productIdOf))],
    };
  });
}
