import type { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import { buildErrorResponses } from './openapi-errors';
import { type BuildOpenApiOptions, buildServiceOpenApi, jsonBody, jsonResponse } from './openapi-shared';
import {
  ZCheckoutSessionResponse,
  ZCreateCartCheckoutRequest,
  ZCreateItemCheckoutRequest,
  ZCreatePortalSessionRequest,
  ZCreateSubscriptionCheckoutRequest,
  ZIdempotencyKey,
  ZPortalSessionResponse,
  ZStripeWebhookAck,
  ZStripeWebhookEvent,
  ZSubscriptionStatusParams,
  ZSubscriptionStatusResponse,
} from './payment';

const API_KEY_SCHEME = 'ApiKeyAuth';
const security = [{ [API_KEY_SCHEME]: [] }];
const idempotencyHeaders = z.object({ 'Idempotency-Key': ZIdempotencyKey.optional() });

/** Errors every authenticated call may return. */
const COMMON_ERRORS: readonly ErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'rate_limited',
  'internal',
  'service_unavailable',
];
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
    errors: [...CHECKOUT_ERRORS, 'price_not_recurring', 'price_product_mismatch'],
  },
  {
    path: '/api/v1/checkout/item',
    operationId: 'createItemCheckout',
    summary: 'Checkout session for a single item',
    schema: ZCreateItemCheckoutRequest,
    errors: CHECKOUT_ERRORS,
  },
  {
    path: '/api/v1/checkout/cart',
    operationId: 'createCartCheckout',
    summary: 'Checkout session for a cart of items',
    schema: ZCreateCartCheckoutRequest,
    errors: CHECKOUT_ERRORS,
  },
];

function registerApiPaths(registry: OpenAPIRegistry): void {
  for (const c of CHECKOUTS) {
    registry.registerPath({
      method: 'post',
      path: c.path,
      operationId: c.operationId,
      summary: c.summary,
      description: 'Redirect the customer to `checkout_url`.',
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
      ...buildErrorResponses([
        ...COMMON_ERRORS,
        'validation_failed',
        'not_found',
        'stripe_unavailable',
        'stripe_rate_limited',
      ]),
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

function registerWebhookPath(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/webhooks/stripe',
    operationId: 'receiveStripeWebhook',
    summary: 'Stripe webhook receiver',
    description:
      'Called by Stripe, not by clients. The raw body is verified against the Stripe-Signature header; events already processed are acknowledged again without effect.',
    tags: ['Webhooks'],
    request: {
      headers: z.object({
        'Stripe-Signature': z.string().min(1).meta({ description: 'Signature computed by Stripe.' }),
      }),
      body: jsonBody(ZStripeWebhookEvent),
    },
    responses: {
      200: jsonResponse('Event accepted.', ZStripeWebhookAck),
      ...buildErrorResponses([
        'webhook_signature_invalid',
        'payload_too_large',
        'internal',
        'service_unavailable',
      ]),
    },
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
        'Hosted checkout sessions, subscription status and customer portal sessions in front of Stripe.',
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
        registerWebhookPath(registry);
      },
      tags: [
        { name: 'Checkout', description: 'Create hosted checkout sessions.' },
        { name: 'Subscriptions', description: 'Subscription status lookups.' },
        { name: 'Portal', description: 'Customer portal sessions.' },
        { name: 'Webhooks', description: 'Events sent by Stripe.' },
      ],
    },
    options,
  );
}
