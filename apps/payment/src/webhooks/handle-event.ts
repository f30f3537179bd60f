import type Stripe from 'stripe';
import { clearCheckoutPending, findCustomerByStripeId, markCustomerDeleted } from '../customers/repo';
import { syncEntitlements } from '../entitlements/sync';
import { applyDispute, applyRefund } from '../purchases/repo';
import { ensurePurchaseForPaymentIntent, recordCheckoutSession } from '../purchases/sync';
import { isResourceMissing, mapStripeError } from '../stripe-errors';
import { findLastEventAt } from '../subscriptions/repo';
import { type SyncDeps, storeSubscription } from '../subscriptions/sync';
import { isEventProcessed, recordEvent } from './repo';

/** The event types this service acts on; Stripe should send exactly these (docs/payment.md). */
export const HANDLED_EVENT_TYPES = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'customer.subscription.paused',
  'customer.subscription.resumed',
  'customer.subscription.trial_will_end',
  'customer.deleted',
  'invoice.paid',
  'invoice.payment_failed',
  'invoice.payment_action_required',
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'entitlements.active_entitlement_summary.updated',
] as const;

/** What became of one delivery; logged and useful in tests. */
export type EventOutcome = 'duplicate' | 'ignored' | 'stale' | 'stored' | 'unchanged';

type Ref = string | { id: string } | null | undefined;

/** The id of an expandable reference; anything but a non-empty string id is no reference. */
function refId(ref: unknown): string | undefined {
  const id = typeof ref === 'object' && ref !== null ? (ref as { id?: unknown }).id : ref;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** Invoices name their subscription under `parent` since API 2025-03-31, directly before. */
type InvoiceLike = {
  subscription?: Ref;
  parent?: { subscription_details?: { subscription?: Ref } | null } | null;
};

/** The subscription an event is about, if it is one this service handles. */
export function subscriptionIdOf(event: Stripe.Event): string | undefined {
  const object = event.data.object as unknown as Record<string, unknown>;
  switch (event.type) {
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed':
    case 'customer.subscription.trial_will_end':
      return refId(object.id);
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.async_payment_failed':
      return refId(object.subscription);
    case 'invoice.paid':
    case 'invoice.payment_failed':
    case 'invoice.payment_action_required': {
      const invoice = object as InvoiceLike;
      return refId(invoice.parent?.subscription_details?.subscription) ?? refId(invoice.subscription);
    }
    default:
      return undefined;
  }
}

/**
 * Reads the subscription as Stripe has it now: events may arrive late, twice or
 * out of order, and their payload may be older than what we stored. A
 * subscription that Stripe no longer returns is taken from a deletion event.
 */
async function readSubscription(
  deps: SyncDeps,
  event: Stripe.Event,
  subscriptionId: string,
): Promise<Stripe.Subscription | undefined> {
  try {
    return await deps.stripe.subscriptions.retrieve(subscriptionId);
  } catch (err) {
    if (isResourceMissing(err) && event.type === 'customer.subscription.deleted') {
      return event.data.object as Stripe.Subscription;
    }
    if (isResourceMissing(err)) return undefined;
    throw mapStripeError(err);
  }
}

/**
 * Applies the part of an event that is not about a subscription: purchases
 * (payment-mode checkouts, refunds, disputes), deleted customers, entitlements
 * and the end of a pending checkout. Returns whether it changed anything.
 */
async function applyOtherEffects(deps: SyncDeps, event: Stripe.Event): Promise<boolean> {
  const object = event.data.object as unknown as Record<string, unknown>;
  const eventAt = new Date(event.created * 1000);
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.async_payment_failed':
    case 'checkout.session.expired': {
      const session = event.data.object as Stripe.Checkout.Session;
      // The outcome of the checkout is known: status reads stop going to Stripe for it.
      const userId = session.metadata?.user_id ?? session.client_reference_id;
      if (userId) await clearCheckoutPending(deps.prisma, userId, new Date(session.created * 1000 + 5000));
      if (session.mode !== 'payment' || event.type === 'checkout.session.expired') return false;
      return recordCheckoutSession(deps, session.id, {
        failed: event.type === 'checkout.session.async_payment_failed',
      });
    }
    case 'charge.refunded': {
      const paymentIntent = refId(object.payment_intent);
      const refunded = object.amount_refunded;
      if (!paymentIntent || typeof refunded !== 'number') return false;
      if (!(await ensurePurchaseForPaymentIntent(deps, paymentIntent))) return false;
      return applyRefund(deps.prisma, paymentIntent, refunded);
    }
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.closed': {
      const paymentIntent = refId(object.payment_intent);
      if (!paymentIntent || typeof object.status !== 'string') return false;
      if (!(await ensurePurchaseForPaymentIntent(deps, paymentIntent))) return false;
      return applyDispute(deps.prisma, paymentIntent, object.status, eventAt);
    }
    case 'customer.deleted': {
      const customerId = refId(object.id);
      return customerId
        ? (await markCustomerDeleted(deps.prisma, customerId, deps.now())) !== undefined
        : false;
    }
    case 'entitlements.active_entitlement_summary.updated': {
      const customerId = refId(object.customer);
      const customer = customerId ? await findCustomerByStripeId(deps.prisma, customerId) : null;
      if (!customer) return false;
      await syncEntitlements(deps, customer);
      return true;
    }
    default:
      return false;
  }
}

/** Applies the subscription an event is about (see handleStripeEvent). */
async function applySubscription(
  deps: SyncDeps,
  event: Stripe.Event,
  subscriptionId: string,
): Promise<'stale' | 'stored' | 'unchanged'> {
  const eventAt = new Date(event.created * 1000);
  const lastEventAt = await findLastEventAt(deps.prisma, subscriptionId);
  if (lastEventAt && eventAt < lastEventAt) return 'stale';
  const syncedAt = deps.now();
  const subscription = await readSubscription(deps, event, subscriptionId);
  const stored = subscription ? await storeSubscription(deps, subscription, { syncedAt, eventAt }) : false;
  return stored ? 'stored' : 'unchanged';
}

/**
 * Applies one verified Stripe event (a webhook delivery or a replay by the
 * reconciliation job). Duplicates (by event id) are dropped. For a
 * subscription: an event older than one already applied to the same
 * subscription is dropped without a Stripe call, since that newer event's
 * read already saw at least its state; same-second events re-read, as their
 * order is unknown. Every other subscription event re-reads the subscription
 * and stores it, guarded by the read time so an older read never overwrites a
 * newer one. Purchases, deleted customers and entitlements are applied by
 * applyOtherEffects. The event is recorded only after it was applied, so a
 * failure (answered 5xx) is retried by Stripe.
 */
export async function handleStripeEvent(deps: SyncDeps, event: Stripe.Event): Promise<EventOutcome> {
  if (await isEventProcessed(deps.prisma, event.id)) return 'duplicate';
  const subscriptionId = subscriptionIdOf(event);
  const subscriptionOutcome = subscriptionId
    ? await applySubscription(deps, event, subscriptionId)
    : undefined;
  const other = await applyOtherEffects(deps, event);
  await recordEvent(deps.prisma, {
    id: event.id,
    type: event.type,
    createdAt: new Date(event.created * 1000),
  });
  if (subscriptionOutcome === 'stored' || other) return 'stored';
  if (subscriptionOutcome) return subscriptionOutcome;
  return (HANDLED_EVENT_TYPES as readonly string[]).includes(event.type) ? 'unchanged' : 'ignored';
}
