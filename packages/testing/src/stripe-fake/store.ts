import { randomBytes } from 'node:crypto';
import { invalidRequest, resourceMissing } from './errors';
import { createMeterStore, type MeterStore } from './meter-store';
import type {
  FakeCheckoutSession,
  FakeCustomer,
  FakeLineItem,
  FakePortalSession,
  FakePrice,
  FakeProduct,
  FakeSubscription,
  Metadata,
  RecurringInterval,
} from './objects';

/** How many objects of each kind the API created (seeding does not count), e.g. to assert one customer per user. */
export type StripeFakeCounters = {
  products: number;
  prices: number;
  customers: number;
  checkoutSessions: number;
  portalSessions: number;
};

/** The fake's in-memory Stripe account. Tests may read and mutate it directly. */
export type StripeStore = {
  products: Map<string, FakeProduct>;
  prices: Map<string, FakePrice>;
  customers: Map<string, FakeCustomer>;
  /** Ids of customers deleted through the API; Stripe still answers retrieve with a `deleted` stub. */
  deletedCustomers: Set<string>;
  subscriptions: Map<string, FakeSubscription>;
  checkoutSessions: Map<string, FakeCheckoutSession>;
  /** Line items per checkout session id (Stripe returns them only through a separate call). */
  checkoutLineItems: Map<string, FakeLineItem[]>;
  /** The validated create params per checkout session id (e.g. `subscription_data.metadata`). */
  checkoutParams: Map<string, Record<string, unknown>>;
  portalSessions: Map<string, FakePortalSession>;
  counters: StripeFakeCounters;
  /** Billing meters, meter events and v2 events (meter-store.ts). */
  billingMeters: MeterStore;
  /** Unix seconds; replaceable so tests can move time. */
  now(): number;
};

export function createStore(now: () => number): StripeStore {
  return {
    products: new Map(),
    prices: new Map(),
    customers: new Map(),
    deletedCustomers: new Set(),
    subscriptions: new Map(),
    checkoutSessions: new Map(),
    checkoutLineItems: new Map(),
    checkoutParams: new Map(),
    portalSessions: new Map(),
    counters: { products: 0, prices: 0, customers: 0, checkoutSessions: 0, portalSessions: 0 },
    billingMeters: createMeterStore(),
    now,
  };
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Stripe-looking id: prefix plus random base62, e.g. `cus_Q3kX...`. */
export function makeId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${out}`;
}

export type ProductInput = { id?: string; name: string; description?: string | null; metadata?: Metadata };

export function addProduct(store: StripeStore, input: ProductInput): FakeProduct {
  const id = input.id ?? makeId('prod', 14);
  if (store.products.has(id))
    throw invalidRequest(`Product already exists.`, 'id', 'resource_already_exists');
  const created = store.now();
  const product: FakeProduct = {
    id,
    object: 'product',
    active: true,
    created,
    updated: created,
    name: input.name,
    description: input.description ?? null,
    default_price: null,
    images: [],
    livemode: false,
    metadata: { ...input.metadata },
    type: 'service',
    unit_label: null,
    url: null,
  };
  store.products.set(id, product);
  return product;
}

export type PriceInput = {
  id?: string;
  /** Product id; when omitted a product named after the price is created. */
  product?: string;
  currency?: string;
  unit_amount?: number;
  recurring?: {
    interval: RecurringInterval;
    interval_count?: number;
    /** `metered` bills the sum of a meter over each period (usage-based billing); needs `meter`. */
    usage_type?: 'licensed' | 'metered';
    /** The billing meter (`mtr_...`) a metered price reads. */
    meter?: string;
  } | null;
  lookup_key?: string | null;
  nickname?: string | null;
  metadata?: Metadata;
  active?: boolean;
};

export function addPrice(store: StripeStore, input: PriceInput): FakePrice {
  const product = input.product ?? addProduct(store, { name: `Product for ${input.id ?? 'price'}` }).id;
  if (!store.products.has(product)) throw resourceMissing('product', product, 'product', 400);
  const meter = input.recurring?.meter;
  if (meter !== undefined && !store.billingMeters.meters.has(meter))
    throw resourceMissing('billing.meter', meter, 'recurring[meter]', 400);
  if (input.recurring?.usage_type === 'metered' && meter === undefined)
    throw invalidRequest(
      'You must specify a meter when creating a price with recurring[usage_type]=metered.',
      'recurring[meter]',
    );
  const id = input.id ?? makeId('price', 24);
  const amount = input.unit_amount ?? 1000;
  const price: FakePrice = {
    id,
    object: 'price',
    active: input.active ?? true,
    billing_scheme: 'per_unit',
    created: store.now(),
    currency: (input.currency ?? 'usd').toLowerCase(),
    custom_unit_amount: null,
    livemode: false,
    lookup_key: input.lookup_key ?? null,
    metadata: { ...input.metadata },
    nickname: input.nickname ?? null,
    product,
    recurring: input.recurring
      ? {
          interval: input.recurring.interval,
          interval_count: input.recurring.interval_count ?? 1,
          meter: input.recurring.meter ?? null,
          trial_period_days: null,
          usage_type: input.recurring.usage_type ?? (input.recurring.meter ? 'metered' : 'licensed'),
        }
      : null,
    tax_behavior: 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: input.recurring ? 'recurring' : 'one_time',
    unit_amount: amount,
    unit_amount_decimal: String(amount),
  };
  store.prices.set(id, price);
  return price;
}

export type CustomerInput = {
  id?: string;
  email?: string | null;
  name?: string | null;
  description?: string | null;
  phone?: string | null;
  metadata?: Metadata;
  created?: number;
};

export function addCustomer(store: StripeStore, input: CustomerInput): FakeCustomer {
  const id = input.id ?? makeId('cus', 14);
  const customer: FakeCustomer = {
    id,
    object: 'customer',
    address: null,
    balance: 0,
    created: input.created ?? store.now(),
    currency: null,
    default_source: null,
    delinquent: false,
    description: input.description ?? null,
    email: input.email ?? null,
    invoice_prefix: id.slice(4, 12).toUpperCase(),
    invoice_settings: {
      custom_fields: null,
      default_payment_method: null,
      footer: null,
      rendering_options: null,
    },
    livemode: false,
    metadata: { ...input.metadata },
    name: input.name ?? null,
    phone: input.phone ?? null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
  store.customers.set(id, customer);
  return customer;
}

/** Applies Stripe's metadata update rule: keys merge, an empty value (null) deletes the key. */
export function mergeMetadata(current: Metadata, update: Record<string, string | null> | null): Metadata {
  if (update === null) return {};
  const next: Metadata = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** Strips unset (null) metadata entries from create params. */
export function cleanMetadata(input: unknown): Metadata {
  return mergeMetadata({}, (input ?? {}) as Record<string, string | null>);
}

/** Adds `count` intervals to a unix timestamp using calendar months, as Stripe bills. */
export function addInterval(start: number, interval: RecurringInterval, count: number): number {
  const date = new Date(start * 1000);
  if (interval === 'day') date.setUTCDate(date.getUTCDate() + count);
  if (interval === 'week') date.setUTCDate(date.getUTCDate() + 7 * count);
  if (interval === 'month') date.setUTCMonth(date.getUTCMonth() + count);
  if (interval === 'year') date.setUTCFullYear(date.getUTCFullYear() + count);
  return Math.floor(date.getTime() / 1000);
}
