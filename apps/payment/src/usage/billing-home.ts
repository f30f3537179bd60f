/**
 * Where a usage event lands: the subscription item whose price reads the
 * event's meter, and the period of that item the event falls in. Pure: the
 * sender (sender.ts) and the billable check (billable.ts) read the items from
 * the database and decide here.
 */

/** Subscription statuses under which Stripe invoices a metered item. */
export const BILLING_STATUSES: ReadonlySet<string> = new Set(['active', 'trialing', 'past_due']);

/** A stored subscription item with a price on a meter. */
export type BillingItem = {
  subscriptionId: string;
  itemId: string;
  priceId: string;
  status: string;
  stripeCustomerId: string;
  currency: string | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  subscriptionCreatedAt: Date;
};

export type Placement =
  /** Send now: the item's open invoice (or the previous one, still a draft) will carry it. */
  | { kind: 'send'; item: BillingItem }
  /** No item can carry it (yet): hold, look again when a subscription changes. */
  | { kind: 'unbillable'; reason: string }
  /** Its period's invoice is finalized: Stripe would meter it and invoice nobody. Bill by hand. */
  | { kind: 'late'; reason: string; item: BillingItem };

export type PlacementRules = {
  /** After a period ends, how long usage of it may still be sent (below Stripe's finalization grace). */
  graceMs: number;
  /** The currency the meter's prices must have (billing by cost); undefined: any. */
  currency: string | undefined;
};

function placeOnItem(item: BillingItem, at: number, now: number, rules: PlacementRules): Placement {
  const start = item.periodStart?.getTime();
  const end = item.periodEnd?.getTime();
  // The stored period ended (its renewal not stored yet): its invoice takes usage until finalized.
  if (end !== undefined && at < end && now >= end + rules.graceMs && (start === undefined || at >= start))
    return {
      kind: 'late',
      item,
      reason: `the invoice of the period ending ${item.periodEnd?.toISOString()} of ${item.subscriptionId} is finalized`,
    };
  if (start === undefined || at >= start) return { kind: 'send', item };
  if (at < item.subscriptionCreatedAt.getTime())
    return { kind: 'unbillable', reason: `before subscription ${item.subscriptionId} started` };
  // An earlier period of this subscription: its invoice takes usage until it is finalized.
  if (now < start + rules.graceMs) return { kind: 'send', item };
  return {
    kind: 'late',
    item,
    reason: `the invoice of the period before ${item.periodStart?.toISOString()} of ${item.subscriptionId} is finalized`,
  };
}

const RANK: Record<Placement['kind'], number> = { send: 0, late: 1, unbillable: 2 };

/**
 * Places one event (its timestamp `at`) among the user's items on its meter
 * at `now`: sent when an item in a billing status has a period that takes it,
 * late when only a finalized period would have, unbillable otherwise (no
 * item, an ended subscription, another currency, usage before the start).
 */
export function placeEvent(
  items: readonly BillingItem[],
  at: Date,
  now: Date,
  rules: PlacementRules,
  meterName: string,
): Placement {
  const billing = items.filter((item) => BILLING_STATUSES.has(item.status));
  if (billing.length === 0)
    return { kind: 'unbillable', reason: `no active subscription item with a price on meter ${meterName}` };
  const { currency } = rules;
  const payable = billing.filter((item) => currency === undefined || item.currency === currency);
  if (payable.length === 0)
    return {
      kind: 'unbillable',
      reason: `currency_mismatch: the price on meter ${meterName} is in ${billing[0]?.currency ?? '?'}, not ${currency}`,
    };
  let best: Placement | undefined;
  for (const item of payable) {
    const placed = placeOnItem(item, at.getTime(), now.getTime(), rules);
    if (!best || RANK[placed.kind] < RANK[best.kind]) best = placed;
  }
  return best ?? { kind: 'unbillable', reason: 'no item' };
}
