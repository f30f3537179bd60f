import type Stripe from 'stripe';
import { invalidRequest, resourceMissing } from './errors';
import { meterTotal } from './meter-store';
import type { FakeSubscription, FakeSubscriptionItem } from './objects';
import { anyOf, p } from './params';
import { listParams, paginate, type Route } from './route';
import { addInterval, cleanMetadata, makeId, type StripeStore } from './store';

/**
 * Invoices of subscriptions with metered prices, as Stripe's usage-based
 * billing makes them: at a period's end a draft invoice is made for it; it
 * counts the meter's usage of that period and is finalized after the
 * finalization grace (1 hour by default), when its lines are frozen: usage
 * that reaches the meter later is on the meter, and on no invoice. The
 * upcoming invoice (`invoices.createPreview`) counts the open period live.
 * Shapes follow stripe-node's `Stripe.Invoice` and `Stripe.InvoiceLineItem`.
 */

/** The part of `Stripe.Invoice` the fake fills, with the lines inline. */
export type FakeInvoice = Pick<
  Stripe.Invoice,
  | 'id'
  | 'object'
  | 'automatically_finalizes_at'
  | 'billing_reason'
  | 'collection_method'
  | 'created'
  | 'currency'
  | 'livemode'
  | 'period_end'
  | 'period_start'
  | 'subtotal'
  | 'total'
  | 'amount_due'
> & {
  customer: string;
  status: 'draft' | 'open';
  lines: { object: 'list'; data: Stripe.InvoiceLineItem[]; has_more: boolean; url: string };
  parent: { type: 'subscription_details'; subscription_details: { subscription: string; metadata: null } };
  /** Fake clock (unix seconds) when it was finalized; null while a draft. */
  finalized_at: number | null;
};

/** Stripe's default invoice finalization grace for subscriptions. */
export const FINALIZATION_GRACE_SECONDS = 3600;

/** A pending invoice item (`invoiceitems.create`): added to the customer's next invoice. */
export type FakeInvoiceItem = Pick<
  Stripe.InvoiceItem,
  'id' | 'object' | 'amount' | 'currency' | 'date' | 'description' | 'livemode' | 'metadata'
> & { customer: string };

type InvoiceState = { invoices: Map<string, FakeInvoice>; items: FakeInvoiceItem[] };
const states = new WeakMap<StripeStore, InvoiceState>();

export function invoiceStateOf(store: StripeStore): InvoiceState {
  let state = states.get(store);
  if (!state) {
    state = { invoices: new Map(), items: [] };
    states.set(store, state);
  }
  return state;
}

/** The quantity of one item over [start, end): the meter's sum for a metered price, else the item's quantity. */
function itemQuantity(
  store: StripeStore,
  sub: FakeSubscription,
  item: FakeSubscriptionItem,
  start: number,
  end: number,
  acceptedBy: number,
): number {
  const meterId = item.price.recurring?.meter;
  if (!meterId) return item.quantity;
  const meter = store.billingMeters.meters.get(meterId);
  if (!meter) return 0;
  return meterTotal(store.billingMeters, meter, sub.customer, start, end, acceptedBy);
}

function lineOf(
  store: StripeStore,
  sub: FakeSubscription,
  item: FakeSubscriptionItem,
  invoiceId: string | null,
  period: { start: number; end: number },
  acceptedBy: number,
): Stripe.InvoiceLineItem {
  const quantity = itemQuantity(store, sub, item, period.start, period.end, acceptedBy);
  const amount = Math.round(quantity * (item.price.unit_amount ?? 0));
  return {
    id: makeId('il', 24),
    object: 'line_item',
    amount,
    currency: item.price.currency,
    description: `${quantity} x ${item.price.nickname ?? item.price.id}`,
    discount_amounts: [],
    discountable: true,
    discounts: [],
    invoice: invoiceId,
    livemode: false,
    metadata: {},
    parent: {
      type: 'subscription_item_details',
      invoice_item_details: null,
      subscription_item_details: {
        invoice_item: null,
        proration: false,
        proration_details: null,
        subscription: sub.id,
        subscription_item: item.id,
      },
    },
    period,
    pretax_credit_amounts: [],
    pricing: {
      type: 'price_details',
      price_details: { price: item.price.id, product: item.price.product },
      unit_amount_decimal: item.price.unit_amount_decimal,
    },
    quantity,
    subscription: sub.id,
    subtotal: amount,
    taxes: [],
  } as unknown as Stripe.InvoiceLineItem;
}

function buildInvoice(
  store: StripeStore,
  sub: FakeSubscription,
  id: string,
  period: { start: number; end: number },
  acceptedBy: number,
): FakeInvoice {
  const lines = sub.items.data.map((item) => lineOf(store, sub, item, id, period, acceptedBy));
  const total = lines.reduce((sum, line) => sum + line.amount, 0);
  return {
    id,
    object: 'invoice',
    automatically_finalizes_at: period.end + FINALIZATION_GRACE_SECONDS,
    billing_reason: 'subscription_cycle',
    collection_method: sub.collection_method,
    created: store.now(),
    currency: sub.currency,
    customer: sub.customer,
    livemode: false,
    period_start: period.start,
    period_end: period.end,
    subtotal: total,
    total,
    amount_due: total,
    status: 'draft',
    lines: { object: 'list', data: lines, has_more: false, url: `/v1/invoices/${id}/lines` },
    parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: null } },
    finalized_at: null,
  };
}

/** A draft counts live; once its grace ran out it is finalized with the usage accepted by then. */
function settle(store: StripeStore, invoice: FakeInvoice): FakeInvoice {
  if (invoice.status !== 'draft') return invoice;
  const sub = store.subscriptions.get(invoice.parent.subscription_details.subscription);
  if (!sub) return invoice;
  const period = { start: invoice.period_start, end: invoice.period_end };
  const finalizesAt = invoice.automatically_finalizes_at ?? Number.POSITIVE_INFINITY;
  const fresh = buildInvoice(store, sub, invoice.id, period, Math.min(store.now(), finalizesAt));
  fresh.created = invoice.created;
  if (store.now() >= finalizesAt) {
    fresh.status = 'open';
    fresh.finalized_at = finalizesAt;
  }
  invoiceStateOf(store).invoices.set(invoice.id, fresh);
  return fresh;
}

/** Test controls of the fake's invoices. */
export type InvoiceControls = {
  /**
   * Ends the subscription's current period now (Stripe's period end): a draft
   * invoice for it that keeps counting the meter until
   * `automatically_finalizes_at` (period end + 1 hour), then frozen.
   */
  closePeriod(subscriptionId: string): FakeInvoice;
  /** The invoices of a customer (settled: drafts past their grace are finalized), newest first. */
  list(customer: string): FakeInvoice[];
  /** Invoice items created for a customer (`invoiceitems.create`), oldest first. */
  items(customer: string): FakeInvoiceItem[];
};

export function createInvoiceControls(store: StripeStore): InvoiceControls {
  return {
    closePeriod: (id) => closePeriod(store, id),
    list: (customer) =>
      [...invoiceStateOf(store).invoices.values()]
        .filter((inv) => inv.customer === customer)
        .map((inv) => settle(store, inv))
        .reverse(),
    items: (customer) => invoiceStateOf(store).items.filter((item) => item.customer === customer),
  };
}

/** Ends the current period of a subscription: a draft invoice for it, and the items' next period. */
export function closePeriod(store: StripeStore, subscriptionId: string): FakeInvoice {
  const sub = store.subscriptions.get(subscriptionId);
  if (!sub) throw new Error(`closePeriod: unknown subscription ${subscriptionId}`);
  const [first] = sub.items.data;
  if (!first) throw new Error(`closePeriod: ${subscriptionId} has no items`);
  const period = { start: first.current_period_start, end: first.current_period_end };
  const invoice = buildInvoice(store, sub, makeId('in', 24), period, store.now());
  invoiceStateOf(store).invoices.set(invoice.id, invoice);
  for (const item of sub.items.data) {
    const interval = item.price.recurring ?? { interval: 'month' as const, interval_count: 1 };
    item.current_period_start = item.current_period_end;
    item.current_period_end = addInterval(
      item.current_period_end,
      interval.interval,
      interval.interval_count,
    );
  }
  return invoice;
}

function previewFor(store: StripeStore, sub: FakeSubscription): FakeInvoice {
  const [first] = sub.items.data;
  const period = {
    start: first?.current_period_start ?? store.now(),
    end: first?.current_period_end ?? store.now(),
  };
  const id = `upcoming_${makeId('in', 24)}`;
  const invoice = buildInvoice(store, sub, id, period, store.now());
  invoice.automatically_finalizes_at = null;
  for (const line of invoice.lines.data) line.invoice = null;
  return invoice;
}

const previewParams = {
  customer: p.string(),
  subscription: p.string(),
  expand: p.expand(),
  ...anyOf(
    'automatic_tax',
    'currency',
    'customer_account',
    'customer_details',
    'discounts',
    'invoice_items',
    'issuer',
    'on_behalf_of',
    'preview_mode',
    'schedule',
    'schedule_details',
    'subscription_details',
  ),
} satisfies Partial<Record<keyof Stripe.InvoiceCreatePreviewParams, unknown>>;

const listInvoiceParams = {
  ...listParams,
  customer: p.string(),
  subscription: p.string(),
  status: p.oneOf(['draft', 'open', 'paid', 'uncollectible', 'void']),
  expand: p.expand(),
  ...anyOf('collection_method', 'created', 'customer_account', 'due_date'),
} satisfies Partial<Record<keyof Stripe.InvoiceListParams, unknown>>;

export const invoiceRoutes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/invoiceitems$/,
    params: {
      customer: p.string({ required: true }),
      amount: p.integer(),
      currency: p.string(),
      description: p.string(),
      metadata: p.metadata(),
      subscription: p.string(),
      expand: p.expand(),
      ...anyOf(
        'discountable',
        'discounts',
        'invoice',
        'period',
        'price_data',
        'pricing',
        'quantity',
        'tax_behavior',
        'tax_code',
        'tax_rates',
        'unit_amount_decimal',
        'customer_account',
      ),
    },
    handle({ store, params }) {
      const customer = params.customer as string;
      if (!store.customers.has(customer)) throw resourceMissing('customer', customer, 'customer', 400);
      if (params.amount === undefined || params.currency === undefined)
        throw invalidRequest('Missing required param: amount.', 'amount', 'parameter_missing');
      const item: FakeInvoiceItem = {
        id: makeId('ii', 24),
        object: 'invoiceitem',
        amount: params.amount as number,
        currency: String(params.currency).toLowerCase(),
        customer,
        date: store.now(),
        description: (params.description as string | undefined) ?? null,
        livemode: false,
        metadata: cleanMetadata(params.metadata),
      };
      invoiceStateOf(store).items.push(item);
      return item;
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/invoices\/create_preview$/,
    params: previewParams,
    handle({ store, params }) {
      const subscriptionId = params.subscription as string | undefined;
      const customer = params.customer as string | undefined;
      const sub = subscriptionId
        ? store.subscriptions.get(subscriptionId)
        : [...store.subscriptions.values()].find((s) => s.customer === customer && s.status !== 'canceled');
      if (subscriptionId && !sub) throw resourceMissing('subscription', subscriptionId, 'subscription', 400);
      if (!sub)
        throw invalidRequest(
          'No upcoming invoices for customer: ' + String(customer),
          undefined,
          'invoice_upcoming_none',
        );
      if (customer !== undefined && sub.customer !== customer)
        throw invalidRequest('The subscription does not belong to this customer.', 'subscription');
      return previewFor(store, sub);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/invoices$/,
    params: listInvoiceParams,
    handle({ store, params }) {
      const all = [...invoiceStateOf(store).invoices.values()].map((inv) => settle(store, inv));
      const matching = all.filter(
        (inv) =>
          (params.customer === undefined || inv.customer === params.customer) &&
          (params.subscription === undefined ||
            inv.parent.subscription_details.subscription === params.subscription) &&
          (params.status === undefined || inv.status === params.status),
      );
      return paginate(matching, params, '/v1/invoices', 'invoice');
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/invoices\/([^/]+)$/,
    params: { expand: p.expand() },
    handle({ store, pathParams: [id = ''] }) {
      const invoice = invoiceStateOf(store).invoices.get(id);
      if (!invoice) throw resourceMissing('invoice', id, 'id');
      return settle(store, invoice);
    },
  },
];
