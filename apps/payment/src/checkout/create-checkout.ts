import type {
  CheckoutSessionResponse,
  CreateCartCheckoutRequest,
  CreateItemCheckoutRequest,
  CreateSubscriptionCheckoutRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import type Stripe from 'stripe';
import { ensureCustomer } from '../customers/ensure-customer';
import type { PaymentDeps } from '../deps';
import { scopeIdempotencyKey } from '../idempotency';
import { callStripe } from '../stripe-errors';
import { mergeCartItems, resolveCartMode } from './cart';
import { isRecurring, loadPrices, productIdOf } from './prices';
import { assertRedirectsAllowed } from './redirects';

export type CheckoutDeps = Pick<PaymentDeps, 'env' | 'kv' | 'logger' | 'prisma' | 'stripe'>;

type Common = { user_id: string; email: string; success_url: string; cancel_url: string };

type SessionPlan = {
  mode: 'payment' | 'subscription';
  lineItems: Array<{ price: string; quantity: number }>;
  metadata: Record<string, string>;
};

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
  const { mode, lineItems, metadata } = await plan();
  const customer = await ensureCustomer(deps, { userId: body.user_id, email: body.email });
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
  const session = await callStripe(() =>
    deps.stripe.checkout.sessions.create(
      params,
      idempotency.stripeKey ? { idempotencyKey: idempotency.stripeKey } : undefined,
    ),
  );
  if (!session.url) throw new Error(`checkout session ${session.id} has no url`);
  await idempotency.remember();
  return { checkout_session_id: session.id, checkout_url: session.url };
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
      lineItems: [{ price: price.id, quantity: 1 }],
      metadata: { user_id: body.user_id, product_id: body.product_id },
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
    return {
      mode: isRecurring(price) ? 'subscription' : 'payment',
      lineItems: [{ price: price.id, quantity: body.quantity }],
      metadata: { user_id: body.user_id, product_id: productIdOf(price) },
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
    const mode = resolveCartMode(items.map((item) => prices.get(item.price_id)!));
    return {
      mode,
      lineItems: items.map((item) => ({ price: item.price_id, quantity: item.quantity })),
      metadata: { user_id: body.user_id },
    };
  });
}
