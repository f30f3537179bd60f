import {
  SUBSCRIPTION_NONE,
  type SubscriptionStatus,
  type SubscriptionStatusResponse,
} from '@platform/contract';

/** A stored subscription with the items of the asked-for product. */
export type StoredSubscription = {
  id: string;
  status: string;
  currentPeriodEnd: Date | null;
  stripeCreatedAt: Date;
  syncedAt: Date;
  items: Array<{ productId: string; currentPeriodEnd: Date | null }>;
};

/** Most entitling first (issue 3): the status a caller should see when a user has several. */
export const STATUS_PREFERENCE: readonly SubscriptionStatus[] = [
  'active',
  'trialing',
  'past_due',
  'unpaid',
  'incomplete',
  'canceled',
  'incomplete_expired',
];

/**
 * Maps Stripe's status onto the spec's enum. Stripe's `paused` (a trial ended
 * without a payment method; no invoices, no access until the customer resumes)
 * becomes `unpaid`: the subscription still exists, is not paid for and must not
 * entitle, which is what `unpaid` tells a caller. An unknown future status maps
 * to `incomplete`, the safest non-entitling, non-final value.
 */
export function toSpecStatus(stripeStatus: string): SubscriptionStatus {
  if (stripeStatus === 'paused') return 'unpaid';
  const known = STATUS_PREFERENCE.find((status) => status === stripeStatus);
  return known ?? 'incomplete';
}

function rank(subscription: StoredSubscription): number {
  return STATUS_PREFERENCE.indexOf(toSpecStatus(subscription.status));
}

/** Picks the most entitling subscription, the newest among equals. */
export function chooseSubscription<T extends StoredSubscription>(subscriptions: readonly T[]): T | undefined {
  return [...subscriptions].sort(
    (a, b) => rank(a) - rank(b) || b.stripeCreatedAt.getTime() - a.stripeCreatedAt.getTime(),
  )[0];
}

/** RFC 3339 in UTC with whole seconds, like the none form's `0001-01-01T00:00:00Z`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * The answer for one subscription and product. The period end comes from the
 * product's item (API 2025-03-31 and later), else from the subscription (older
 * versions); when Stripe gave neither, the zero timestamp of the none form.
 */
export function toStatusResponse(
  subscription: StoredSubscription,
  productId: string,
): SubscriptionStatusResponse {
  const item = subscription.items.find((i) => i.productId === productId && i.currentPeriodEnd !== null);
  const periodEnd = item?.currentPeriodEnd ?? subscription.currentPeriodEnd;
  return {
    status: toSpecStatus(subscription.status),
    subscription_id: subscription.id,
    current_period_end: periodEnd ? formatTimestamp(periodEnd) : SUBSCRIPTION_NONE.current_period_end,
    product_id: productId,
  };
}
