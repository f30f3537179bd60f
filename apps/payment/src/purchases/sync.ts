import type Stripe from 'stripe';
import { findCustomerByStripeId } from '../customers/repo';
import { callStripe, isResourceMissing, mapStripeError } from '../stripe-errors';
import type { SyncDeps } from '../subscriptions/sync';
import { hasPurchaseForPaymentIntent, type PaymentState, type PurchaseLine, upsertPurchase } from './repo';

/** Stripe Checkout takes at most 100 line items per session. */
const MAX_LINE_ITEMS = 100;

const idOf = (ref: string | { id: string } | null | undefined): string | null =>
  ref == null ? null : typeof ref === 'string' ? ref : ref.id;

async function readLines(deps: SyncDeps, sessionId: string): Promise<PurchaseLine[]> {
  const items = await callStripe(() =>
    deps.stripe.checkout.sessions
      .listLineItems(sessionId, { limit: 100 })
      .autoPagingToArray({ limit: MAX_LINE_ITEMS }),
  );
  return items.map((item) => ({
    priceId: item.price?.id ?? '',
    productId: idOf(item.price?.product as string | { id: string } | undefined) ?? '',
    quantity: item.quantity ?? 1,
    amountTotal: item.amount_total,
  }));
}

/** The calling-application user a session was for: our metadata, the reference, else the customer mapping. */
async function userOf(deps: SyncDeps, session: Stripe.Checkout.Session): Promise<string | undefined> {
  const fromSession = session.metadata?.user_id ?? session.client_reference_id;
  if (fromSession) return fromSession;
  const customerId = idOf(session.customer);
  return customerId ? (await findCustomerByStripeId(deps.prisma, customerId))?.userId : undefined;
}

/** The session as Stripe has it now; undefined when Stripe does not know it (not one of this account's). */
async function retrieveSession(deps: SyncDeps, id: string): Promise<Stripe.Checkout.Session | undefined> {
  try {
    return await deps.stripe.checkout.sessions.retrieve(id);
  } catch (err) {
    if (isResourceMissing(err)) return undefined;
    throw mapStripeError(err);
  }
}

/**
 * Stores a completed payment-mode checkout as Stripe has it now: its lines, its
 * payment intent and whether it is paid or still pending (an async method such
 * as a bank debit); `failed` when Stripe reported the async payment failed.
 * Anything else (open or expired sessions, subscription mode) is not a
 * purchase and is skipped (returns false).
 */
export async function recordCheckoutSession(
  deps: SyncDeps,
  sessionOrId: string | Stripe.Checkout.Session,
  opts: { failed?: boolean } = {},
): Promise<boolean> {
  const session = typeof sessionOrId === 'string' ? await retrieveSession(deps, sessionOrId) : sessionOrId;
  if (!session) return false;
  if (session.mode !== 'payment' || session.status !== 'complete') return false;
  const userId = await userOf(deps, session);
  if (!userId) {
    deps.logger.info({ sessionId: session.id }, 'purchase of no known user; not stored');
    return false;
  }
  const paymentStatus: PaymentState = opts.failed
    ? 'failed'
    : session.payment_status === 'unpaid'
      ? 'pending'
      : 'paid';
  await upsertPurchase(deps.prisma, {
    id: session.id,
    userId,
    stripeCustomerId: idOf(session.customer),
    paymentIntentId: idOf(session.payment_intent),
    paymentStatus,
    amountTotal: session.amount_total ?? 0,
    currency: session.currency ?? '',
    stripeCreatedAt: new Date(session.created * 1000),
    items: await readLines(deps, session.id),
  });
  return true;
}

/**
 * Makes sure the purchase paid through a payment intent is stored (a refund
 * or dispute event may arrive before the checkout's own event, or instead of
 * a lost one) by finding its checkout session at Stripe. False when the
 * payment did not come from one of our checkouts.
 */
export async function ensurePurchaseForPaymentIntent(
  deps: SyncDeps,
  paymentIntentId: string,
): Promise<boolean> {
  if (await hasPurchaseForPaymentIntent(deps.prisma, paymentIntentId)) return true;
  const sessions = await callStripe(() =>
    deps.stripe.checkout.sessions.list({ payment_intent: paymentIntentId, limit: 1 }),
  );
  const session = sessions.data[0];
  return session ? recordCheckoutSession(deps, session) : false;
}

/** Backfill: stores the customer's completed payment-mode checkouts (newest `limit`). */
export async function syncCustomerPurchases(
  deps: SyncDeps,
  stripeCustomerId: string,
  limit = 100,
): Promise<number> {
  const sessions = await callStripe(() =>
    deps.stripe.checkout.sessions
      .list({ customer: stripeCustomerId, status: 'complete', limit: 100 })
      .autoPagingToArray({ limit }),
  );
  let stored = 0;
  for (const session of sessions) if (await recordCheckoutSession(deps, session)) stored++;
  return stored;
}
