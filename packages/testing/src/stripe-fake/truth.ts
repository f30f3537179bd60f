import { invalidRequest, resourceMissing } from './errors';
import type { FakeCheckoutSession, StripeObject } from './objects';
import { anyOf, p } from './params';
import { listParams, paginate, type Route } from './route';
import { makeId, type StripeStore } from './store';
import { buildEvent, type StripeEventEnvelope } from './webhooks';

/**
 * The parts of the fake that say what a customer paid for: the event log
 * (`GET /v1/events`, with `delivery_success`), checkout line items, charges
 * with refunds and disputes, and active entitlements. Shapes follow Stripe's
 * API reference; params are checked against stripe-node's request types
 * (EventListParams, SessionListParams, ActiveEntitlementListParams,
 * SessionListLineItemsParams).
 */

export type FakeCharge = StripeObject<'charge'> & {
  amount: number;
  amount_refunded: number;
  created: number;
  currency: string;
  customer: string | null;
  disputed: boolean;
  livemode: false;
  paid: boolean;
  payment_intent: string;
  refunded: boolean;
  status: 'succeeded' | 'pending' | 'failed';
};

export type FakeDispute = StripeObject<'dispute'> & {
  amount: number;
  charge: string;
  created: number;
  currency: string;
  livemode: false;
  payment_intent: string;
  reason: string;
  status:
    | 'warning_needs_response'
    | 'warning_under_review'
    | 'warning_closed'
    | 'needs_response'
    | 'under_review'
    | 'won'
    | 'lost';
};

export type FakeActiveEntitlement = StripeObject<'entitlements.active_entitlement'> & {
  feature: string;
  livemode: false;
  lookup_key: string;
};

/** An event in the account's log, with whether its webhook delivery succeeded. */
export type FakeEventRecord = { event: StripeEventEnvelope; delivered: boolean };

/** The extra state these routes keep; attached to the store. */
export type TruthState = {
  events: FakeEventRecord[];
  /** Charge per payment intent id. */
  charges: Map<string, FakeCharge>;
  disputes: Map<string, FakeDispute>;
  /** Active entitlements per customer id. */
  entitlements: Map<string, FakeActiveEntitlement[]>;
};

const states = new WeakMap<StripeStore, TruthState>();

export function truthOf(store: StripeStore): TruthState {
  let state = states.get(store);
  if (!state) {
    state = { events: [], charges: new Map(), disputes: new Map(), entitlements: new Map() };
    states.set(store, state);
  }
  return state;
}

/** Appends an event to the account's log, as Stripe does for every change, and returns it. */
export function logEvent<T>(
  store: StripeStore,
  type: string,
  object: T,
  opts: { delivered?: boolean; created?: number } = {},
): StripeEventEnvelope<T> {
  const event = buildEvent(type, object, { created: opts.created ?? store.now() });
  truthOf(store).events.push({ event: event as StripeEventEnvelope, delivered: opts.delivered ?? true });
  return event;
}

/**
 * Marks a completed payment-mode session as paid through a payment intent
 * and charge (or left pending, as an async method such as SEPA debit leaves it).
 */
export function chargeSession(
  store: StripeStore,
  session: FakeCheckoutSession,
  opts: { async?: boolean } = {},
): FakeCharge {
  const paymentIntent = makeId('pi', 24);
  session.payment_intent = paymentIntent;
  if (opts.async) session.payment_status = 'unpaid';
  const charge: FakeCharge = {
    id: makeId('ch', 24),
    object: 'charge',
    amount: session.amount_total ?? 0,
    amount_refunded: 0,
    created: store.now(),
    currency: session.currency ?? 'usd',
    customer: session.customer,
    disputed: false,
    livemode: false,
    paid: !opts.async,
    payment_intent: paymentIntent,
    refunded: false,
    status: opts.async ? 'pending' : 'succeeded',
  };
  truthOf(store).charges.set(paymentIntent, charge);
  return charge;
}

function chargeOfSession(store: StripeStore, sessionId: string): FakeCharge {
  const session = store.checkoutSessions.get(sessionId);
  const charge = session?.payment_intent ? truthOf(store).charges.get(session.payment_intent) : undefined;
  if (!charge) throw new Error(`no charge for checkout session ${sessionId}`);
  return charge;
}

/** Settles (or fails) an async payment of a completed session. */
export function settleAsyncPayment(
  store: StripeStore,
  sessionId: string,
  succeeded: boolean,
): FakeCheckoutSession {
  const session = store.checkoutSessions.get(sessionId);
  if (!session) throw new Error(`unknown checkout session ${sessionId}`);
  const charge = chargeOfSession(store, sessionId);
  charge.status = succeeded ? 'succeeded' : 'failed';
  charge.paid = succeeded;
  if (succeeded) session.payment_status = 'paid';
  return session;
}

/** Refunds `amount` (default: what is left) of a session's charge; returns the charge for `charge.refunded`. */
export function refundSession(store: StripeStore, sessionId: string, amount?: number): FakeCharge {
  const charge = chargeOfSession(store, sessionId);
  const left = charge.amount - charge.amount_refunded;
  const refund = amount ?? left;
  if (refund <= 0 || refund > left) throw new Error(`cannot refund ${refund} of ${left}`);
  charge.amount_refunded += refund;
  charge.refunded = charge.amount_refunded === charge.amount;
  return charge;
}

/** Opens a dispute on a session's charge, or moves its dispute to `status`. */
export function disputeSession(
  store: StripeStore,
  sessionId: string,
  status: FakeDispute['status'] = 'needs_response',
): FakeDispute {
  const charge = chargeOfSession(store, sessionId);
  const { disputes } = truthOf(store);
  let dispute = [...disputes.values()].find((d) => d.charge === charge.id);
  if (!dispute) {
    dispute = {
      id: makeId('dp', 24),
      object: 'dispute',
      amount: charge.amount - charge.amount_refunded,
      charge: charge.id,
      created: store.now(),
      currency: charge.currency,
      livemode: false,
      payment_intent: charge.payment_intent,
      reason: 'fraudulent',
      status,
    };
    disputes.set(dispute.id, dispute);
  }
  dispute.status = status;
  charge.disputed = true;
  return dispute;
}

/** Sets a customer's active entitlements (feature lookup keys); returns the summary object Stripe sends. */
export function setEntitlements(store: StripeStore, customer: string, lookupKeys: readonly string[]) {
  const list = lookupKeys.map(
    (key): FakeActiveEntitlement => ({
      id: makeId('ent', 24),
      object: 'entitlements.active_entitlement',
      feature: `feat_${key}`,
      livemode: false,
      lookup_key: key,
    }),
  );
  truthOf(store).entitlements.set(customer, list);
  return {
    object: 'entitlements.active_entitlement_summary' as const,
    customer,
    entitlements: {
      object: 'list' as const,
      data: list,
      has_more: false,
      url: '/v1/entitlements/active_entitlements',
    },
    livemode: false as const,
  };
}

type Range = { gt?: number; gte?: number; lt?: number; lte?: number };

function inRange(value: number, range: unknown): boolean {
  if (range === undefined || range === null) return true;
  if (typeof range === 'number') return value === range;
  const r = range as Range;
  return (
    (r.gt === undefined || value > r.gt) &&
    (r.gte === undefined || value >= r.gte) &&
    (r.lt === undefined || value < r.lt) &&
    (r.lte === undefined || value <= r.lte)
  );
}

const rangeParam = p.object({ gt: p.integer(), gte: p.integer(), lt: p.integer(), lte: p.integer() });

export const truthRoutes: Route[] = [
  {
    method: 'GET',
    pattern: /^\/v1\/events$/,
    params: {
      ...listParams,
      created: rangeParam,
      delivery_success: p.boolean(),
      type: p.string(),
      types: p.array(p.string()),
      expand: p.expand(),
    },
    handle({ store, params }) {
      if (params.type != null && params.types != null) {
        throw invalidRequest('You may only specify one of these parameters: type, types.', 'type');
      }
      const types = params.types as string[] | undefined;
      if (types && types.length > 20) throw invalidRequest('You may pass at most 20 types.', 'types');
      const type = params.type as string | undefined;
      const delivered = params.delivery_success as boolean | undefined;
      // Stripe keeps events for 30 days.
      const oldest = store.now() - 30 * 86_400;
      const events = truthOf(store)
        .events.filter(
          ({ event, delivered: ok }) =>
            event.created >= oldest &&
            inRange(event.created, params.created) &&
            (delivered === undefined || ok === delivered) &&
            (type === undefined || event.type === type) &&
            (types === undefined || types.includes(event.type)),
        )
        .map((r) => r.event);
      return paginate(events, params, '/v1/events', 'event');
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/checkout\/sessions$/,
    params: {
      ...listParams,
      created: rangeParam,
      customer: p.string(),
      payment_intent: p.string(),
      status: p.oneOf(['complete', 'expired', 'open']),
      subscription: p.string(),
      expand: p.expand(),
      ...anyOf('customer_account', 'customer_details', 'payment_link'),
    },
    handle({ store, params }) {
      const sessions = [...store.checkoutSessions.values()].filter(
        (s) =>
          inRange(s.created, params.created) &&
          (params.customer == null || s.customer === params.customer) &&
          (params.payment_intent == null || s.payment_intent === params.payment_intent) &&
          (params.status == null || s.status === params.status) &&
          (params.subscription == null || s.subscription === params.subscription),
      );
      return paginate(sessions, params, '/v1/checkout/sessions', 'checkout.session');
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/,
    params: { ...listParams, expand: p.expand() },
    handle({ store, params, pathParams: [id = ''] }) {
      const session = store.checkoutSessions.get(id);
      if (!session) throw resourceMissing('checkout.session', id, 'session');
      const items = (store.checkoutLineItems.get(id) ?? []).map((item, index) => {
        const price = store.prices.get(item.price);
        const amount = (price?.unit_amount ?? 0) * item.quantity;
        return {
          // Stable per session and position, so pagination cursors work.
          id: `li_${id.slice(8, 30)}${index}`,
          object: 'item',
          amount_discount: 0,
          amount_subtotal: amount,
          amount_tax: 0,
          amount_total: amount,
          created: session.created - index,
          currency: price?.currency ?? 'usd',
          description: price?.nickname ?? null,
          price: price ? structuredClone(price) : null,
          quantity: item.quantity,
        };
      });
      const page = paginate(items, params, `/v1/checkout/sessions/${id}/line_items`, 'line_item');
      // Stripe lists line items in cart order, not newest first.
      page.data.sort((a, b) => b.created - a.created);
      for (const item of page.data) Reflect.deleteProperty(item, 'created');
      return page;
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/entitlements\/active_entitlements$/,
    params: { ...listParams, customer: p.string({ required: true }), expand: p.expand() },
    handle({ store, params }) {
      const customer = params.customer as string;
      if (!store.customers.has(customer)) throw resourceMissing('customer', customer, 'customer', 400);
      const list = (truthOf(store).entitlements.get(customer) ?? []).map((e, i) => ({ ...e, created: -i }));
      const page = paginate(list, params, '/v1/entitlements/active_entitlements', 'active_entitlement');
      for (const item of page.data) Reflect.deleteProperty(item, 'created');
      return page;
    },
  },
];
