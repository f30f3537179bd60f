import { type LoopbackServer, listenLoopback } from '../http-server';
import { createInvoiceControls, type InvoiceControls } from './invoices';
import { createMeterControls, type MeterControls } from './meter-controls';
import type {
  FakeCheckoutSession,
  FakeCustomer,
  FakeLineItem,
  FakePrice,
  FakeProduct,
  FakeSubscription,
} from './objects';
import {
  createStripeHandler,
  type ServerState,
  type StripeFakeRequest,
  type StripeFault,
  type StripeHang,
} from './server';
import {
  addCustomer,
  addPrice,
  addProduct,
  type CustomerInput,
  createStore,
  type PriceInput,
  type ProductInput,
  type StripeFakeCounters,
  type StripeStore,
} from './store';
import {
  addSubscription,
  changeSubscription,
  finishCheckoutSession,
  type SubscriptionChange,
  type SubscriptionSeed,
} from './subscriptions';
import {
  chargeSession,
  disputeSession,
  type FakeCharge,
  type FakeDispute,
  type FakeEventRecord,
  logEvent,
  refundSession,
  setEntitlements,
  settleAsyncPayment,
  truthOf,
} from './truth';
import type { StripeEventEnvelope } from './webhooks';

export type { StripeErrorType } from './errors';
export type { FakeInvoice, FakeInvoiceItem, InvoiceControls } from './invoices';
export type { MeterControls } from './meter-controls';
export type * from './meter-store';
export type * from './objects';
export type { StripeFakeRequest, StripeFault, StripeHang } from './server';
export type { CustomerInput, PriceInput, ProductInput, StripeFakeCounters, StripeStore } from './store';
export type { SubscriptionChange, SubscriptionSeed } from './subscriptions';
export type { FakeActiveEntitlement, FakeCharge, FakeDispute, FakeEventRecord } from './truth';
export {
  buildEvent,
  FAKE_STRIPE_API_VERSION,
  type StripeEventEnvelope,
  signWebhookPayload,
} from './webhooks';

/** Options of `startStripeFake`. */
export type StripeFakeOptions = {
  /** When set, only this secret key is accepted; otherwise any `sk_test_`/`rk_test_` key is. */
  apiKey?: string;
  /** False makes portal sessions without `configuration` fail as in an account with no saved portal settings. */
  portalConfigured?: boolean;
  /** Delay before created/updated customers appear in `customers.search` (Stripe's index lags up to a minute). */
  searchIndexDelayMs?: number;
  /** Clock in unix seconds for `created` and period fields; defaults to the wall clock. */
  now?: () => number;
};

/** Options for the real SDK: `new Stripe(key, fake.sdkConfig())`. */
export type StripeSdkConfig = { host: string; port: number; protocol: 'http'; maxNetworkRetries: 0 };

/** A Stripe API fake on loopback; point the real stripe SDK at it. */
export type StripeFake = LoopbackServer & {
  host: '127.0.0.1';
  sdkConfig(): StripeSdkConfig;
  /** In-memory account state; read it to assert, mutate it to arrange. */
  store: StripeStore;
  /** Objects created through the API (not by seeding). */
  counters: StripeFakeCounters;
  /** Every request received, in order. */
  requests: StripeFakeRequest[];
  seedProduct(input: ProductInput): FakeProduct;
  seedPrice(input: PriceInput): FakePrice;
  seedCustomer(input?: CustomerInput): FakeCustomer;
  seedSubscription(seed: SubscriptionSeed): FakeSubscription;
  /** Simulates a change in Stripe over time (renewal, cancellation, dunning). */
  updateSubscription(id: string, change: SubscriptionChange): FakeSubscription;
  /**
   * Simulates the customer paying: completes the session and, in subscription mode, creates the
   * subscription; in payment mode a payment intent and charge are made (`async`: the payment is
   * still pending, as with SEPA debit, until `settleAsyncPayment`).
   */
  completeCheckoutSession(id: string, opts?: { async?: boolean }): FakeCheckoutSession;
  /** Settles an async payment of a completed session (`checkout.session.async_payment_succeeded` / `_failed`). */
  settleAsyncPayment(sessionId: string, succeeded: boolean): FakeCheckoutSession;
  /** Refunds part (or, without amount, the rest) of a paid session's charge; returns the charge. */
  refund(sessionId: string, amount?: number): FakeCharge;
  /** Opens a dispute on a paid session's charge or moves it to `status`; returns the dispute. */
  dispute(sessionId: string, status?: FakeDispute['status']): FakeDispute;
  /** Sets a customer's active entitlements; returns the `entitlements.active_entitlement_summary` object. */
  setEntitlements(customer: string, lookupKeys: readonly string[]): ReturnType<typeof setEntitlements>;
  /** Deletes a customer as the Dashboard does (its subscriptions end); returns the customer as it was. */
  deleteCustomer(id: string): FakeCustomer;
  /**
   * Records an event in the account's log (`GET /v1/events`) and returns it for delivery.
   * `delivered: false` makes it an event whose webhook delivery failed (`delivery_success=false`).
   */
  logEvent<T>(type: string, object: T, opts?: { delivered?: boolean }): StripeEventEnvelope<T>;
  /** The account's event log. */
  events(): FakeEventRecord[];
  /** What a checkout session bought, as `{ price, quantity }`. */
  lineItems(sessionId: string): FakeLineItem[];
  /** Makes the next matching request(s) fail with a Stripe error. */
  fault(fault: StripeFault): void;
  /** Makes the next matching request(s) hang until the client times out. */
  hang(hang?: StripeHang): void;
  /** Drops pending faults and hangs. */
  clearFaults(): void;
  /** Billing meters: seeding, totals, outages, error reports (meter-controls.ts). */
  meters: MeterControls;
  /** Invoices of metered subscriptions: period ends, finalization (invoices.ts). */
  invoices: InvoiceControls;
};

/** Starts the Stripe fake on 127.0.0.1 with an OS-assigned port. */
export async function startStripeFake(opts: StripeFakeOptions = {}): Promise<StripeFake> {
  const store = createStore(opts.now ?? (() => Math.floor(Date.now() / 1000)));
  const state: ServerState = {
    store,
    requests: [],
    faults: [],
    hangs: [],
    idempotency: new Map(),
    apiKey: opts.apiKey,
    routeOptions: {
      portalConfigured: opts.portalConfigured ?? true,
      searchIndexDelayMs: opts.searchIndexDelayMs ?? 0,
      searchVisibleAt: new Map(),
    },
  };
  const server = await listenLoopback(createStripeHandler(state));
  return {
    url: server.url,
    port: server.port,
    close: server.close,
    host: '127.0.0.1',
    sdkConfig: () => ({ host: '127.0.0.1', port: server.port, protocol: 'http', maxNetworkRetries: 0 }),
    store,
    counters: store.counters,
    requests: state.requests,
    seedProduct: (input) => addProduct(store, input),
    seedPrice: (input) => addPrice(store, input),
    seedCustomer: (input = {}) => addCustomer(store, input),
    seedSubscription: (seed) => addSubscription(store, seed),
    updateSubscription: (id, change) => changeSubscription(store, id, change),
    completeCheckoutSession: (id, completeOpts = {}) => {
      const session = finishCheckoutSession(store, id);
      if (session.mode === 'payment') chargeSession(store, session, completeOpts);
      return session;
    },
    settleAsyncPayment: (sessionId, succeeded) => settleAsyncPayment(store, sessionId, succeeded),
    refund: (sessionId, amount) => refundSession(store, sessionId, amount),
    dispute: (sessionId, status) => disputeSession(store, sessionId, status),
    setEntitlements: (customer, keys) => setEntitlements(store, customer, keys),
    deleteCustomer: (id) => {
      const customer = store.customers.get(id);
      if (!customer) throw new Error(`deleteCustomer: unknown customer ${id}`);
      store.customers.delete(id);
      store.deletedCustomers.add(id);
      for (const sub of store.subscriptions.values()) {
        if (sub.customer === id && sub.status !== 'canceled')
          changeSubscription(store, sub.id, { status: 'canceled' });
      }
      return structuredClone(customer);
    },
    logEvent: (type, object, eventOpts) => logEvent(store, type, object, eventOpts),
    events: () => truthOf(store).events,
    lineItems: (sessionId) => store.checkoutLineItems.get(sessionId) ?? [],
    fault: (fault) =>
      state.faults.push({ ...fault, left: fault.times ?? (fault.untilMs === undefined ? 1 : Infinity) }),
    hang: (hang = {}) => state.hangs.push({ ...hang, left: hang.times ?? 1 }),
    clearFaults: () => {
      state.faults.length = 0;
      state.hangs.length = 0;
    },
    meters: createMeterControls(store, (fault) => state.faults.push({ ...fault, left: Infinity })),
    invoices: createInvoiceControls(store),
  };
}
