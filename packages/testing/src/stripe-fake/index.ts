import { type LoopbackServer, listenLoopback } from '../http-server';
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

export type { StripeErrorType } from './errors';
export type * from './objects';
export type { StripeFakeRequest, StripeFault, StripeHang } from './server';
export type { CustomerInput, PriceInput, ProductInput, StripeFakeCounters, StripeStore } from './store';
export type { SubscriptionChange, SubscriptionSeed } from './subscriptions';
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
  /** Simulates the customer paying: completes the session and, in subscription mode, creates the subscription. */
  completeCheckoutSession(id: string): FakeCheckoutSession;
  /** What a checkout session bought, as `{ price, quantity }`. */
  lineItems(sessionId: string): FakeLineItem[];
  /** Makes the next matching request(s) fail with a Stripe error. */
  fault(fault: StripeFault): void;
  /** Makes the next matching request(s) hang until the client times out. */
  hang(hang?: StripeHang): void;
  /** Drops pending faults and hangs. */
  clearFaults(): void;
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
    completeCheckoutSession: (id) => finishCheckoutSession(store, id),
    lineItems: (sessionId) => store.checkoutLineItems.get(sessionId) ?? [],
    fault: (fault) => state.faults.push({ ...fault, left: fault.times ?? 1 }),
    hang: (hang = {}) => state.hangs.push({ ...hang, left: hang.times ?? 1 }),
    clearFaults: () => {
      state.faults.length = 0;
      state.hangs.length = 0;
    },
  };
}
