import { randomUUID } from 'node:crypto';
import {
  type BillableResponse,
  type CheckoutSessionResponse,
  type EntitlementsResponse,
  type HealthResponse,
  type MeterErrorReportsResponse,
  type PortalSessionResponse,
  type PurchasesResponse,
  type SubscriptionStatusResponse,
  type SyncResponse,
  type UsageEventRefusalsResponse,
  type UsageEventsResponse,
  ZBillableResponse,
  ZCheckoutSessionResponse,
  ZEntitlementsResponse,
  ZHealthResponse,
  ZMeterErrorReportsResponse,
  ZPortalSessionResponse,
  ZPurchasesResponse,
  ZSubscriptionStatusResponse,
  ZSyncResponse,
  ZUsageEventRefusalsResponse,
  ZUsageEventsResponse,
} from '@platform/contract';
import { PlatformApiError } from './errors';
import type {
  CreateCartCheckoutInput,
  CreateItemCheckoutInput,
  CreatePortalSessionInput,
  CreateSubscriptionCheckoutInput,
  RecordUsageEventsInput,
} from './inputs';
import type { ClientOptions } from './options';
import { createTransport, type ResponseSchema, readJson } from './responses';
import { type CallOptions, executeCall } from './transport';

/** Options of the payment service's POST calls. */
export type PaymentWriteOptions = CallOptions & {
  /**
   * The `Idempotency-Key` of this logical call. The client makes a fresh UUID
   * per call when omitted; pass your own to deduplicate across process restarts.
   */
  idempotencyKey?: string;
};

/** Typed client of the payment service; every method rejects with a `PlatformClientError` subclass. */
export type PaymentClient = {
  /** `GET /health` (no key needed, but it is sent anyway). */
  health(options?: CallOptions): Promise<HealthResponse>;
  /** `POST /api/v1/checkout/subscription`. */
  createSubscriptionCheckout(
    request: CreateSubscriptionCheckoutInput,
    options?: PaymentWriteOptions,
  ): Promise<CheckoutSessionResponse>;
  /** `POST /api/v1/checkout/item`; `quantity` defaults to 1 on the server. */
  createItemCheckout(
    request: CreateItemCheckoutInput,
    options?: PaymentWriteOptions,
  ): Promise<CheckoutSessionResponse>;
  /** `POST /api/v1/checkout/cart`. */
  createCartCheckout(
    request: CreateCartCheckoutInput,
    options?: PaymentWriteOptions,
  ): Promise<CheckoutSessionResponse>;
  /** `GET /api/v1/subscriptions/{user_id}/{product_id}`; status `none` when there is no subscription. */
  getSubscriptionStatus(
    params: { user_id: string; product_id: string },
    options?: CallOptions,
  ): Promise<SubscriptionStatusResponse>;
  /** `POST /api/v1/portal`. */
  createPortalSession(
    request: CreatePortalSessionInput,
    options?: PaymentWriteOptions,
  ): Promise<PortalSessionResponse>;
  /**
   * A subscription checkout, or, when the user already has an entitling
   * subscription to the product (409 `subscription_exists`), a portal session
   * where they can manage it: redirect to `url` either way. Every other error
   * is thrown as by `createSubscriptionCheckout`.
   */
  subscribeOrManage(
    request: CreateSubscriptionCheckoutInput & { return_url: string },
    options?: PaymentWriteOptions,
  ): Promise<
    { kind: 'checkout'; url: string; checkout_session_id: string } | { kind: 'portal'; url: string }
  >;
  /** `GET /api/v1/purchases/{user_id}`: one-time purchases, newest first, with their status. */
  listPurchases(userId: string, options?: CallOptions): Promise<PurchasesResponse>;
  /** `GET /api/v1/entitlements/{user_id}`: the active feature lookup keys. */
  getEntitlements(userId: string, options?: CallOptions): Promise<EntitlementsResponse>;
  /**
   * Whether the user's payments grant `feature` (a Stripe feature lookup key):
   * ask this instead of interpreting subscription statuses, so a pricing change
   * made in Stripe needs no code change here.
   */
  isEntitled(userId: string, feature: string, options?: CallOptions): Promise<boolean>;
  /** `POST /api/v1/sync/{user_id}`: re-read the user from Stripe now (call it on the checkout success page). */
  syncUser(userId: string, options?: CallOptions): Promise<SyncResponse>;
  /**
   * `POST /api/v1/usage-events`: resolves once every event is stored in the
   * outbox. Retried like the other POSTs; safe because the service is
   * idempotent by event id (a resent event comes back as `duplicate`).
   */
  recordUsageEvents(
    request: RecordUsageEventsInput,
    options?: PaymentWriteOptions,
  ): Promise<UsageEventsResponse>;
  /** `GET /api/v1/usage-events/error-reports`: Stripe's meter error reports, newest first. */
  listMeterErrorReports(
    params?: { limit?: number },
    options?: CallOptions,
  ): Promise<MeterErrorReportsResponse>;
  /**
   * `GET /api/v1/usage-events/billable/{user_id}`: whether the user's usage on
   * the meter (payment's default when omitted) would land on an invoice now.
   */
  getUsageBillable(userId: string, meter?: string, options?: CallOptions): Promise<BillableResponse>;
  /** `GET /api/v1/usage-events/refused`: events answered `refused` and parked, newest first. */
  listRefusedUsageEvents(
    params?: { limit?: number },
    options?: CallOptions,
  ): Promise<UsageEventRefusalsResponse>;
};

/** True for the 409 a subscription checkout gets when the user already has that subscription. */
export function isSubscriptionExistsError(err: unknown): err is PlatformApiError {
  return err instanceof PlatformApiError && err.code === 'subscription_exists';
}

/** Stripe calls behind the service take a few seconds at worst; 30 s per attempt is generous. */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Creates a payment client. POSTs carry an `Idempotency-Key` (one UUID per
 * logical call, reused by its retries), which is what makes retrying them safe:
 * the service answers a repeated key with the first session instead of a new one.
 */
export function createPaymentClient(options: ClientOptions): PaymentClient {
  const transport = createTransport(options, 'X-API-Key', DEFAULT_TIMEOUT_MS);

  function post<T>(
    path: string,
    body: unknown,
    schema: ResponseSchema<T>,
    call: PaymentWriteOptions = {},
  ): Promise<T> {
    const { idempotencyKey = randomUUID(), ...rest } = call;
    const headers = { 'Idempotency-Key': idempotencyKey };
    return executeCall(
      transport,
      { method: 'POST', path, body, headers, retryable: true },
      rest,
      readJson(schema),
    );
  }

  function get<T>(path: string, schema: ResponseSchema<T>, call: CallOptions = {}): Promise<T> {
    return executeCall(transport, { method: 'GET', path, retryable: true }, call, readJson(schema));
  }

  const createSubscriptionCheckout: PaymentClient['createSubscriptionCheckout'] = (request, call) =>
    post('/api/v1/checkout/subscription', request, ZCheckoutSessionResponse, call);
  const createPortalSession: PaymentClient['createPortalSession'] = (request, call) =>
    post('/api/v1/portal', request, ZPortalSessionResponse, call);
  const getEntitlements: PaymentClient['getEntitlements'] = (userId, call) =>
    get(`/api/v1/entitlements/${encodeURIComponent(userId)}`, ZEntitlementsResponse, call);

  return {
    health: (call = {}) =>
      executeCall(
        transport,
        { method: 'GET', path: '/health', retryable: true },
        call,
        readJson(ZHealthResponse),
      ),
    createSubscriptionCheckout,
    createItemCheckout: (request, call) =>
      post('/api/v1/checkout/item', request, ZCheckoutSessionResponse, call),
    createCartCheckout: (request, call) =>
      post('/api/v1/checkout/cart', request, ZCheckoutSessionResponse, call),
    getSubscriptionStatus: ({ user_id, product_id }, call = {}) =>
      executeCall(
        transport,
        {
          method: 'GET',
          path: `/api/v1/subscriptions/${encodeURIComponent(user_id)}/${encodeURIComponent(product_id)}`,
          retryable: true,
        },
        call,
        readJson(ZSubscriptionStatusResponse),
      ),
    createPortalSession,
    async subscribeOrManage({ return_url, ...request }, call) {
      try {
        const session = await createSubscriptionCheckout(request, call);
        return {
          kind: 'checkout',
          url: session.checkout_url,
          checkout_session_id: session.checkout_session_id,
        };
      } catch (err) {
        if (!isSubscriptionExistsError(err)) throw err;
        const { idempotencyKey: _unused, ...rest } = call ?? {};
        const portal = await createPortalSession({ user_id: request.user_id, return_url }, rest);
        return { kind: 'portal', url: portal.portal_url };
      }
    },
    listPurchases: (userId, call) =>
      get(`/api/v1/purchases/${encodeURIComponent(userId)}`, ZPurchasesResponse, call),
    getEntitlements,
    isEntitled: async (userId, feature, call) =>
      (await getEntitlements(userId, call)).entitlements.some((e) => e.lookup_key === feature),
    syncUser: (userId, call = {}) =>
      executeCall(
        transport,
        // Re-reading is idempotent, so a failed attempt is retried like a GET.
        { method: 'POST', path: `/api/v1/sync/${encodeURIComponent(userId)}`, retryable: true },
        call,
        readJson(ZSyncResponse),
      ),
    recordUsageEvents: (request, call) => post('/api/v1/usage-events', request, ZUsageEventsResponse, call),
    listMeterErrorReports: ({ limit } = {}, call = {}) =>
      executeCall(
        transport,
        {
          method: 'GET',
          path: `/api/v1/usage-events/error-reports${limit === undefined ? '' : `?limit=${limit}`}`,
          retryable: true,
        },
        call,
        readJson(ZMeterErrorReportsResponse),
      ),
    getUsageBillable: (userId, meter, call) =>
      get(
        `/api/v1/usage-events/billable/${encodeURIComponent(userId)}${meter === undefined ? '' : `?meter=${encodeURIComponent(meter)}`}`,
        ZBillableResponse,
        call,
      ),
    listRefusedUsageEvents: ({ limit } = {}, call = {}) =>
      executeCall(
        transport,
        {
          method: 'GET',
          path: `/api/v1/usage-events/refused${limit === undefined ? '' : `?limit=${limit}`}`,
          retryable: true,
        },
        call,
        readJson(ZUsageEventRefusalsResponse),
      ),
  };
}
