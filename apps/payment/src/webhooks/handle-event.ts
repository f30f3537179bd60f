import type Stripe from 'stripe';
import { isResourceMissing, mapStripeError } from '../stripe-errors';
import { findLastEventAt } from '../subscriptions/repo';
import { type SyncDeps, storeSubscription } from '../subscriptions/sync';
import { isEventProcessed, recordEvent } from './repo';

/** The event types this service acts on; Stripe should send exactly these (docs/payment.md). */
export const HANDLED_EVENT_TYPES = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
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
      return refId(object.id);
    case 'checkout.session.completed':
      return refId(object.subscription);
    case 'invoice.paid':
    case 'invoice.payment_failed': {
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
 * Applies one verified Stripe event. Duplicates (by event id) are dropped. An
 * event older than one already applied to the same subscription is dropped
 * without a Stripe call, since that newer event's read already saw at least its
 * state; same-second events re-read, as their order is unknown. Every other
 * handled event re-reads the subscription and stores it, guarded by the read
 * time so an older read never overwrites a newer one. The event is recorded
 * only after it was applied, so a failure (answered 5xx) is retried by Stripe.
 */
export async function handleStripeEvent(deps: SyncDeps, event: Stripe.Event): Promise<EventOutcome> {
  if (await isEventProcessed(deps.prisma, event.id)) return 'duplicate';
  const record = () =>
    recordEvent(deps.prisma, { id: event.id, type: event.type, createdAt: new Date(event.created * 1000) });
  const subscriptionId = subscriptionIdOf(event);
  if (!subscriptionId) {
    await record();
    return 'ignored';
  }
  const eventAt = new Date(event.created * 1000);
  const lastEventAt = await findLastEventAt(deps.prisma, subscriptionId);
  if (lastEventAt && eventAt < lastEventAt) {
    await record();
    return 'stale';
  }
  const syncedAt = deps.now();
  const subscription = await readSubscription(deps, event, subscriptionId);
  const stored = subscription ? await storeSubscription(deps, subscription, { syncedAt, eventAt }) : false;
  await record();
  return stored ? 'stored' : 'unchanged';
}
