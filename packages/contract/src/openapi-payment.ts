import type { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import { buildErrorResponses } from './openapi-errors';
import { COMMON_ERRORS, registerStripeWebhookPath } from './openapi-payment-shared';
import { registerUsagePaths } from './openapi-payment-usage';
import { type BuildOpenApiOptions, buildServiceOpenApi, jsonBody, jsonResponse } from './openapi-shared';
import {
  ZCheckoutSessionResponse,
  ZCreateCartCheckoutRequest,
  ZCreateItemCheckoutRequest,
  ZCreatePortalSessionRequest,
  ZCreateSubscriptionCheckoutRequest,
  ZEntitlementsResponse,
  ZIdempotencyKey,
  ZPortalSessionResponse,
  ZPurchasesResponse,
  ZStripeWebhookEvent,
  ZSubscriptionStatusParams,
  ZSubscriptionStatusResponse,
  ZSyncResponse,
  ZUserParams,
} from './payment';

const API_KEY_SCHEME = 'ApiKeyAuth';
const security = [{ [API_KEY_SCHEME]: [] }];
const idempotencyHeaders = z.object({ 'Idempotency-Key': ZIdempotencyKey.optional() });

/** Errors of every JSON-body call that talks to Stripe. */
const WRITE_ERRORS: readonly ErrorCode[] = [
  ...COMMON_ERRORS,
  'validation_failed',
  'deserialization_error',
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_conflict',
  'not_found',
  'redirect_host_not_allowed',
  'stripe_invalid_request',
  'stripe_unavailable',
  'stripe_card_error',
  'stripe_rate_limited',
];
const CHECKOUT_ERRORS: readonly ErrorCode[] = [...WRITE_ERRORS, 'price_not_found'];
/** Errors of the reads that may ask Stripe (subscription status, entitlements). */
const STRIPE_READ_ERRORS: readonly ErrorCode[] = [
  ...COMMON_ERRORS,
  'validation_failed',
  'not_found',
  'stripe_unavailable',
  'stripe_rate_limited',
];

type Checkout = {
  path: string;
  operationId: string;
  summary: string;
  schema: z.ZodType;
  errors: readonly ErrorCode[];
};

const CHECKOUTS: readonly Checkout[] = [
  {
    path: '/api/v1/checkout/subscription',
    operationId: 'createSubscriptionCheckout',
    summary: 'Checkout session for a subscription',
    schema: ZCreateSubscriptionCheckoutRequest,
    errors: [...CHECKOUT_ERRORS, 'price_not_recurring', 'price_product_mismatch', 'subscription_exists'],
  },
  {
    path: '/api/v1/checkout/item',
    operationId: 'createItemCheckout',
    summary: 'Checkout session for a single item',
    schema: ZCreateItemCheckoutRequest,
    errors: [...CHECKOUT_ERRORS, 'subscription_exists'],
  },
  {
    path: '/api/v1/checkout/cart',
    operationId: 'createCartCheckout',
    summary: 'Checkout session for a cart of items',
    schema: ZCreateCartCheckoutRequest,
    errors: [...CHECKOUT_ERRORS, 'subscription_exists'],
  },
];

function registerApiPaths(registry: OpenAPIRegistry): void {
  for (const c of CHECKOUTS) {
    registry.registerPath({
      method: 'post',
      path: c.path,
      operationId: c.operationId,
      summary: c.summary,
      description:
        'Redirect the customer to `checkout_url`. A subscription checkout (any recurring price) for a product the user already has an `active`, `trialing` or `past_due` subscription to is refused with 409 `subscription_exists`: send the user to the customer portal (`POST /api/v1/portal`) instead.',
      tags: ['Checkout'],
      security,
      request: {
        headers: idempotencyHeaders,
        body: jsonBody(c.schema),
      },
      responses: {
        200: jsonResponse('Session created.', ZCheckoutSessionResponse),
        ...buildErrorResponses(c.errors),
      },
    });
  }
  registry.registerPath({
    method: 'get',
    path: '/api/v1/subscriptions/{user_id}/{product_id}',
    operationId: 'getSubscriptionStatus',
    summary: 'Subscription status of a user for a product',
    description: 'When no subscription exists the `none` form is returned with 200, not 404.',
    tags: ['Subscriptions'],
    security,
    request: { params: ZSubscriptionStatusParams },
    responses: {
      200: jsonResponse('Current status.', ZSubscriptionStatusResponse),
      ...buildErrorResponses(STRIPE_READ_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/portal',
    operationId: 'createPortalSession',
    summary: 'Customer portal session',
    description: 'Redirect the user to `portal_url`. A user who never checked out has no portal (404).',
    tags: ['Portal'],
    security,
    request: {
      headers: idempotencyHeaders,
      body: jsonBody(ZCreatePortalSessionRequest),
    },
    responses: {
      200: jsonResponse('Portal session created.', ZPortalSessionResponse),
      ...buildErrorResponses([...WRITE_ERRORS, 'customer_not_found']),
    },
  });
}

/** The per-user reads and the sync: path `{user_id}`, API key, rate limit, the common errors. */
function registerUserPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/purchases/{user_id}',
    operationId: 'listPurchases',
    summary: 'One-time purchases of a user',
    description:
      'Payment-mode checkouts of the user, newest first (at most 100), with their line items and a status: `paid`, `pending` (async payment under way), `failed`, `refunded`, `partially_refunded`, `disputed`. Kept by webhooks and the reconciliation job; a user with none gets an empty list.',
    tags: ['Purchases'],
    security,
    request: { params: ZUserParams },
    responses: {
      200: jsonResponse('The purchases.', ZPurchasesResponse),
      ...buildErrorResponses([...COMMON_ERRORS, 'validation_failed', 'not_found']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/entitlements/{user_id}',
    operationId: 'getEntitlements',
    summary: 'Active entitlements of a user',
    description:
      "The features (Stripe feature lookup keys) the user's payments grant now, as Stripe's entitlements compute them from the product catalogue. Ask this instead of interpreting subscription statuses; an empty list when there are none.",
    tags: ['Entitlements'],
    security,
    request: { params: ZUserParams },
    responses: {
      200: jsonResponse('The active entitlements.', ZEntitlementsResponse),
      ...buildErrorResponses(STRIPE_READ_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/sync/{user_id}',
    operationId: 'syncUser',
    summary: 'Re-read a user from Stripe now',
    description:
      "Call it from the success page Stripe redirects to: the user's subscriptions, entitlements and one-time purchases are read from Stripe and stored before any webhook arrives. No body. 404 for a user who never checked out.",
    tags: ['Subscriptions'],
    security,
    request: { params: ZUserParams },
    responses: {
      200: jsonResponse('What is stored for the user now.', ZSyncResponse),
      ...buildErrorResponses([...STRIPE_READ_ERRORS, 'customer_not_found']),
    },
  });
}

function registerWebhookPath(registry: OpenAPIRegistry): void {
  registerStripeWebhookPath(registry, {
    path: '/webhooks/stripe',
    operationId: 'receiveStripeWebhook',
    summary: 'Stripe webhook receiver',
    description:
      'Called by Stripe, not by clients. The raw body is verified against the Stripe-Signature header; events already processed are acknowledged again without effect.',
    body: ZStripeWebhookEvent,
  });
}

/** Builds the OpenAPI 3.0.3 document of the payment service; a new object per call. */
export function buildPaymentOpenApi(
  options: BuildOpenApiOptions = {},
): ReturnType<OpenApiGeneratorV3['generateDocument']> {
  return buildServiceOpenApi(
    {
      service: 'payment',
      title: 'Payment Service',
      description:
        'Hosted checkout sessions, subscription status, one-time purchases, entitlements and customer portal sessions in front of Stripe.',
      securitySchemes: {
        [API_KEY_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'The key configured in PAYMENT_MS_API_KEY.',
        },
      },
      registerPaths: (registry) => {
        registerApiPaths(registry);
        registerUserPaths(registry);
        registerWebhookPath(registry);
        registerUsagePaths(registry, security);
      },
      tags: [
        { name: 'Checkout', description: 'Create hosted checkout sessions.' },
        { name: 'Subscriptions', description: 'Subscription status lookups.' },
        { name: 'Portal', description: 'Customer portal sessions.' },
        { name: 'Purchases', description: 'One-time purchases and their refunds and disputes.' },
        { name: 'Entitlements', description: 'Features the user has paid for.' },
        { name: 'Usage', description: 'Usage events billed through Stripe Billing Meters.' },
        { name: 'Webhooks', description: 'Events sent by Stripe.' },
      ],
    },
    options,
  );
}
