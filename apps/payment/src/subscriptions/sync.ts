import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import { findCustomerByStripeId, markSubscriptionsSynced } from '../customers/repo';
import type { PrismaClient } from '../generated/prisma/client';
import { callStripe } from '../stripe-errors';
import { upsertSubscriptionSnapshot } from './repo';
import { toSnapshot } from './snapshot';

export type SyncDeps = {
  prisma: PrismaClient;
  stripe: Stripe;
  logger: Logger;
  now: () => Date;
  /** Told the user id after a webhook stored a changed subscription (the gateway's cache, notify-gateway.ts). */
  onSubscriptionStored?: ((userId: string) => void) | undefined;
};

/** Most subscriptions one customer may have listed in one fallback fetch. */
const MAX_LISTED_SUBSCRIPTIONS = 1000;

/**
 * A subscription embeds at most a page of items; read the rest when Stripe says
 * there are more, so a product on a late item is not missed.
 */
async function readAllItems(
  deps: SyncDeps,
  subscription: Stripe.Subscription,
): Promise<Stripe.SubscriptionItem[]> {
  if (!subscription.items.has_more) return subscription.items.data;
  return callStripe(() =>
    deps.stripe.subscriptionItems
      .list({ subscription: subscription.id, limit: 100 })
      .autoPagingToArray({ limit: MAX_LISTED_SUBSCRIPTIONS }),
  );
}

/**
 * Stores one subscription read from Stripe at `syncedAt` for the user mapped to
 * its customer. A subscription of a customer this service did not create is
 * skipped (returns false): it has no user to answer for.
 */
export async function storeSubscription(
  deps: SyncDeps,
  subscription: Stripe.Subscription,
  read: { syncedAt: Date; eventAt?: Date },
): Promise<boolean> {
  const snapshot = toSnapshot(subscription, await readAllItems(deps, subscription));
  const customer = await findCustomerByStripeId(deps.prisma, snapshot.stripeCustomerId);
  if (!customer) {
    deps.logger.info(
      { subscriptionId: snapshot.id, stripeCustomerId: snapshot.stripeCustomerId },
      'subscription of a customer this service does not know; not stored',
    );
    return false;
  }
  const stored = await upsertSubscriptionSnapshot(deps.prisma, {
    userId: customer.userId,
    snapshot,
    ...read,
  });
  if (stored) deps.onSubscriptionStored?.(customer.userId);
  return stored;
}

/**
 * The fallback read: lists every subscription of the customer (all statuses)
 * from Stripe once, stores each, and marks the customer as fully synced at the
 * time the read started.
 */
export async function syncCustomerSubscriptions(
  deps: SyncDeps,
  customer: { userId: string; stripeCustomerId: string },
): Promise<void> {
  const syncedAt = deps.now();
  const subscriptions = await callStripe(() =>
    deps.stripe.subscriptions
      .list({ customer: customer.stripeCustomerId, status: 'all', limit: 100 })
      .autoPagingToArray({ limit: MAX_LISTED_SUBSCRIPTIONS }),
  );
  let stored = false;
  for (const subscription of subscriptions) {
    const snapshot = toSnapshot(subscription, await readAllItems(deps, subscription));
    stored =
      (await upsertSubscriptionSnapshot(deps.prisma, { userId: customer.userId, snapshot, syncedAt })) ||
      stored;
  }
  await markSubscriptionsSynced(deps.prisma, customer.userId, syncedAt);
  if (stored) deps.onSubscriptionStored?.(customer.userId);
}
