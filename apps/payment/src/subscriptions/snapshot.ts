import type Stripe from 'stripe';

/** One item of a stored subscription. */
export type SnapshotItem = {
  id: string;
  productId: string;
  priceId: string;
  /** Item-level period end (Stripe API 2025-03-31 and later); null when Stripe sent none. */
  currentPeriodEnd: Date | null;
  /** Item-level period start; null when Stripe sent none. */
  currentPeriodStart?: Date | null;
  /** The billing meter of a metered price (`price.recurring.meter`); null for other prices. */
  meterId?: string | null;
  /** The price's currency. */
  currency?: string | null;
};

/** What the service keeps of a Stripe subscription. `status` is Stripe's own value (e.g. `paused`). */
export type SubscriptionSnapshot = {
  id: string;
  stripeCustomerId: string;
  status: string;
  /** Subscription-level period end, present only in API versions before 2025-03-31. */
  currentPeriodEnd: Date | null;
  stripeCreatedAt: Date;
  items: SnapshotItem[];
};

/** Fields that older API versions had on the subscription and newer ones have only on items. */
type LegacyPeriod = { current_period_end?: number | null };

function fromUnix(seconds: number | null | undefined): Date | null {
  return typeof seconds === 'number' ? new Date(seconds * 1000) : null;
}

function idOf(value: string | { id: string }): string {
  return typeof value === 'string' ? value : value.id;
}

/**
 * Converts a Stripe subscription (as retrieved, listed or sent in an event)
 * into the stored snapshot. Both period-end fields are read, so events and
 * objects of older API versions still give a period end.
 */
export function toSnapshot(
  subscription: Stripe.Subscription,
  items: readonly Stripe.SubscriptionItem[] = subscription.items.data,
): SubscriptionSnapshot {
  return {
    id: subscription.id,
    stripeCustomerId: idOf(subscription.customer),
    status: subscription.status,
    currentPeriodEnd: fromUnix((subscription as unknown as LegacyPeriod).current_period_end),
    stripeCreatedAt: new Date(subscription.created * 1000),
    items: items.map((item) => ({
      id: item.id,
      productId: idOf(item.price.product),
      priceId: item.price.id,
      currentPeriodEnd: fromUnix((item as Partial<Stripe.SubscriptionItem>).current_period_end),
      currentPeriodStart: fromUnix((item as Partial<Stripe.SubscriptionItem>).current_period_start),
      meterId: item.price.recurring?.meter ?? null,
      currency: item.price.currency ?? null,
    })),
  };
}
