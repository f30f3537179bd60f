import type {
  FakeCheckoutSession,
  FakeSubscription,
  FakeSubscriptionItem,
  Metadata,
  SubscriptionStatus,
} from './objects';
import { addCustomer, addInterval, makeId, type StripeStore } from './store';

/** Changes to apply to a stored subscription, to simulate what happens over time in Stripe. */
export type SubscriptionChange = {
  status?: SubscriptionStatus;
  /** Sets the period end on every item (and on the subscription when it has the legacy fields). */
  current_period_end?: number;
  cancel_at_period_end?: boolean;
  canceled_at?: number | null;
  metadata?: Metadata;
};

/** Input of `seedSubscription`: what a test needs to describe, the rest is derived like Stripe would. */
export type SubscriptionSeed = {
  id?: string;
  customer: string;
  items: Array<{
    price: string;
    quantity?: number;
    current_period_start?: number;
    /** Defaults to one price interval after the period start. */
    current_period_end?: number;
  }>;
  status?: SubscriptionStatus;
  /** Unix seconds; defaults to now. */
  created?: number;
  metadata?: Metadata;
  cancel_at_period_end?: boolean;
  canceled_at?: number | null;
  trial_end?: number | null;
  /**
   * Also put `current_period_start`/`current_period_end` on the subscription itself,
   * the shape of API versions before 2025-03-31 (omitted by default, like today's API).
   */
  legacyPeriodFields?: boolean;
};

/** Creates a subscription directly in the store (Stripe has no "create active subscription" call without payment). */
export function addSubscription(store: StripeStore, seed: SubscriptionSeed): FakeSubscription {
  if (!store.customers.has(seed.customer))
    throw new Error(`seedSubscription: unknown customer ${seed.customer}`);
  if (seed.items.length === 0) throw new Error('seedSubscription: at least one item is required');
  const id = seed.id ?? makeId('sub', 24);
  const created = seed.created ?? store.now();
  const items: FakeSubscriptionItem[] = seed.items.map((item) => {
    const price = store.prices.get(item.price);
    if (!price) throw new Error(`seedSubscription: unknown price ${item.price}`);
    const start = item.current_period_start ?? created;
    const interval = price.recurring ?? { interval: 'month' as const, interval_count: 1 };
    return {
      id: makeId('si', 14),
      object: 'subscription_item',
      created,
      current_period_start: start,
      current_period_end:
        item.current_period_end ?? addInterval(start, interval.interval, interval.interval_count),
      discounts: [],
      metadata: {},
      price,
      quantity: item.quantity ?? 1,
      subscription: id,
      tax_rates: [],
    };
  });
  const status = seed.status ?? 'active';
  const ended = status === 'canceled' || status === 'incomplete_expired';
  const subscription: FakeSubscription = {
    id,
    object: 'subscription',
    billing_cycle_anchor: items[0]?.current_period_start ?? created,
    cancel_at: null,
    cancel_at_period_end: seed.cancel_at_period_end ?? false,
    canceled_at: seed.canceled_at ?? (status === 'canceled' ? store.now() : null),
    collection_method: 'charge_automatically',
    created,
    currency: items[0]?.price.currency ?? 'usd',
    customer: seed.customer,
    ended_at: ended ? store.now() : null,
    items: {
      object: 'list',
      data: items,
      has_more: false,
      total_count: items.length,
      url: `/v1/subscription_items?subscription=${id}`,
    },
    latest_invoice: null,
    livemode: false,
    metadata: { ...seed.metadata },
    start_date: created,
    status,
    trial_end: seed.trial_end ?? null,
    trial_start: seed.trial_end ? created : null,
  };
  if (seed.legacyPeriodFields) {
    subscription.current_period_start = Math.min(...items.map((item) => item.current_period_start));
    subscription.current_period_end = Math.min(...items.map((item) => item.current_period_end));
  }
  store.subscriptions.set(id, subscription);
  return subscription;
}

export function changeSubscription(
  store: StripeStore,
  id: string,
  change: SubscriptionChange,
): FakeSubscription {
  const sub = store.subscriptions.get(id);
  if (!sub) throw new Error(`updateSubscription: unknown subscription ${id}`);
  if (change.status !== undefined) {
    sub.status = change.status;
    if (change.status === 'canceled') {
      sub.canceled_at ??= store.now();
      sub.ended_at ??= store.now();
    }
  }
  if (change.current_period_end !== undefined) {
    for (const item of sub.items.data) item.current_period_end = change.current_period_end;
    if (sub.current_period_end !== undefined) sub.current_period_end = change.current_period_end;
  }
  if (change.cancel_at_period_end !== undefined) sub.cancel_at_period_end = change.cancel_at_period_end;
  if (change.canceled_at !== undefined) sub.canceled_at = change.canceled_at;
  if (change.metadata !== undefined) sub.metadata = { ...sub.metadata, ...change.metadata };
  return sub;
}

/**
 * Plays the customer paying on the hosted page: the session becomes complete,
 * a customer is created from `customer_email` when none was given, and in
 * subscription mode an active subscription carrying `subscription_data.metadata`
 * is created. Returns the session, ready for `buildEvent('checkout.session.completed', ...)`.
 */
export function finishCheckoutSession(store: StripeStore, id: string): FakeCheckoutSession {
  const session = store.checkoutSessions.get(id);
  if (!session) throw new Error(`completeCheckoutSession: unknown session ${id}`);
  if (session.status !== 'open')
    throw new Error(`completeCheckoutSession: session ${id} is ${session.status}`);
  session.customer ??= addCustomer(store, { email: session.customer_email }).id;
  session.status = 'complete';
  session.payment_status = session.mode === 'setup' ? 'no_payment_required' : 'paid';
  if (session.mode === 'subscription') {
    const params = store.checkoutParams.get(id) ?? {};
    const data = (params.subscription_data ?? {}) as { metadata?: Record<string, string | null> };
    const metadata = Object.fromEntries(
      Object.entries(data.metadata ?? {}).filter((entry): entry is [string, string] => entry[1] !== null),
    );
    const items = (store.checkoutLineItems.get(id) ?? []).filter(
      (item) => store.prices.get(item.price)?.type === 'recurring',
    );
    session.subscription = addSubscription(store, { customer: session.customer, items, metadata }).id;
  }
  return session;
}
