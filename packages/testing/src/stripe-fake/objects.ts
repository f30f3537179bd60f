/**
 * Shapes of the Stripe objects the fake serves, trimmed to the fields the
 * platform reads plus the ones stripe-node's types promise. Field names and
 * nullability follow Stripe's API reference.
 */
export type Metadata = Record<string, string>;

/** What every Stripe object starts with: its id and, in `object`, the name of its type. */
export type StripeObject<Name extends string> = { id: string; object: Name };

export type FakeProduct = StripeObject<'product'> & {
  active: boolean;
  created: number;
  updated: number;
  name: string;
  description: string | null;
  default_price: string | null;
  images: string[];
  livemode: false;
  metadata: Metadata;
  type: 'service' | 'good';
  unit_label: string | null;
  url: string | null;
};

export type RecurringInterval = 'day' | 'week' | 'month' | 'year';

export type FakePrice = StripeObject<'price'> & {
  active: boolean;
  billing_scheme: 'per_unit' | 'tiered';
  created: number;
  currency: string;
  custom_unit_amount: null;
  livemode: false;
  lookup_key: string | null;
  metadata: Metadata;
  nickname: string | null;
  product: string;
  recurring: {
    interval: RecurringInterval;
    interval_count: number;
    meter: string | null;
    trial_period_days: number | null;
    usage_type: 'licensed' | 'metered';
  } | null;
  tax_behavior: 'exclusive' | 'inclusive' | 'unspecified';
  tiers_mode: null;
  transform_quantity: null;
  type: 'one_time' | 'recurring';
  unit_amount: number | null;
  unit_amount_decimal: string | null;
};

export type FakeCustomer = StripeObject<'customer'> & {
  address: unknown;
  balance: number;
  created: number;
  currency: string | null;
  default_source: string | null;
  delinquent: boolean;
  description: string | null;
  email: string | null;
  invoice_prefix: string;
  invoice_settings: {
    custom_fields: null;
    default_payment_method: string | null;
    footer: null;
    rendering_options: null;
  };
  livemode: false;
  metadata: Metadata;
  name: string | null;
  phone: string | null;
  preferred_locales: string[];
  shipping: unknown;
  tax_exempt: 'exempt' | 'none' | 'reverse';
  test_clock: string | null;
};

/** Every status a Stripe subscription can have. */
export type SubscriptionStatus =
  | 'active'
  | 'canceled'
  | 'incomplete'
  | 'incomplete_expired'
  | 'past_due'
  | 'paused'
  | 'trialing'
  | 'unpaid';

export const SUBSCRIPTION_STATUSES: readonly SubscriptionStatus[] = [
  'active',
  'canceled',
  'incomplete',
  'incomplete_expired',
  'past_due',
  'paused',
  'trialing',
  'unpaid',
];

export type FakeSubscriptionItem = StripeObject<'subscription_item'> & {
  created: number;
  /** Since API version 2025-03-31 the billing period lives on each item. */
  current_period_start: number;
  current_period_end: number;
  discounts: string[];
  metadata: Metadata;
  price: FakePrice;
  quantity: number;
  subscription: string;
  tax_rates: unknown[];
};

export type FakeSubscription = StripeObject<'subscription'> & {
  billing_cycle_anchor: number;
  cancel_at: number | null;
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  collection_method: 'charge_automatically' | 'send_invoice';
  created: number;
  currency: string;
  customer: string;
  ended_at: number | null;
  items: { object: 'list'; data: FakeSubscriptionItem[]; has_more: false; total_count: number; url: string };
  latest_invoice: string | null;
  livemode: false;
  metadata: Metadata;
  start_date: number;
  status: SubscriptionStatus;
  trial_end: number | null;
  trial_start: number | null;
  /** Present only when seeded with the pre-2025-03-31 shape. */
  current_period_start?: number;
  current_period_end?: number;
};

export type FakeCheckoutSession = StripeObject<'checkout.session'> & {
  allow_promotion_codes: boolean | null;
  amount_subtotal: number | null;
  amount_total: number | null;
  cancel_url: string | null;
  client_reference_id: string | null;
  client_secret: string | null;
  created: number;
  currency: string | null;
  customer: string | null;
  customer_email: string | null;
  expires_at: number;
  livemode: false;
  locale: string | null;
  metadata: Metadata;
  mode: 'payment' | 'setup' | 'subscription';
  payment_intent: string | null;
  payment_status: 'no_payment_required' | 'paid' | 'unpaid';
  return_url: string | null;
  status: 'complete' | 'expired' | 'open';
  subscription: string | null;
  success_url: string | null;
  ui_mode: string;
  url: string | null;
};

/** A line item as the fake keeps it, so tests can assert what was bought. */
export type FakeLineItem = { price: string; quantity: number };

export type FakePortalSession = StripeObject<'billing_portal.session'> & {
  configuration: string;
  created: number;
  customer: string;
  flow: null;
  livemode: false;
  locale: string | null;
  on_behalf_of: string | null;
  return_url: string | null;
  url: string;
};

/** A list page as Stripe returns it. */
export type StripeList<T> = { object: 'list'; data: T[]; has_more: boolean; url: string };
