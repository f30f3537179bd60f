import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import { buildErrorResponses } from './openapi-errors';
import { jsonBody, jsonResponse } from './openapi-shared';
import { ZStripeWebhookAck } from './payment';

/** Errors every authenticated call of the payment service may return. */
export const COMMON_ERRORS: readonly ErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'rate_limited',
  'internal',
  'service_unavailable',
];

/**
 * A path Stripe calls, not clients: the body is verified against the Stripe-Signature header
 * and answered with `{received: true}`. Both webhook paths of the payment service share this.
 */
export function registerStripeWebhookPath(
  registry: OpenAPIRegistry,
  path: { path: string; operationId: string; summary: string; description: string; body: z.ZodType },
): void {
  registry.registerPath({
    method: 'post',
    path: path.path,
    operationId: path.operationId,
    summary: path.summary,
    description: path.description,
    tags: ['Webhooks'],
    request: {
      headers: z.object({
        'Stripe-Signature': z.string().min(1).meta({ description: 'Signature computed by Stripe.' }),
      }),
      body: jsonBody(path.body),
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
