import { randomUUID } from 'node:crypto';
import {
  type CheckoutSessionResponse,
  type HealthResponse,
  type PortalSessionResponse,
  type SubscriptionStatusResponse,
  ZCheckoutSessionResponse,
  ZHealthResponse,
  ZPortalSessionResponse,
  ZSubscriptionStatusResponse,
} from '@platform/contract';
import type {
  CreateCartCheckoutInput,
  CreateItemCheckoutInput,
  CreatePortalSessionInput,
  CreateSubscriptionCheckoutInput,
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
};

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

  return {
    health: (call = {}) =>
      executeCall(
        transport,
        { method: 'GET', path: '/health', retryable: true },
        call,
        readJson(ZHealthResponse),
      ),
    createSubscriptionCheckout: (request, call) =>
      post('/api/v1/checkout/subscription', request, ZCheckoutSessionResponse, call),
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
    createPortalSession: (request, call) => post('/api/v1/portal', request, ZPortalSessionResponse, call),
  };
}
