import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { buildErrorResponses } from './openapi-errors';
import { COMMON_ERRORS, registerStripeWebhookPath } from './openapi-payment-shared';
import { jsonBody, jsonResponse } from './openapi-shared';
import { ZUserParams } from './payment';
import {
  MAX_USAGE_EVENTS_PER_BATCH,
  ZBillableQuery,
  ZBillableResponse,
  ZMeterErrorReportsQuery,
  ZMeterErrorReportsResponse,
  ZUsageEventRefusalsResponse,
  ZUsageEventsRequest,
  ZUsageEventsResponse,
} from './payment-usage';

/** The usage-billing paths of the payment service (docs/billing.md). */
export function registerUsagePaths(
  registry: OpenAPIRegistry,
  security: Array<Record<string, string[]>>,
): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/usage-events',
    operationId: 'recordUsageEvents',
    summary: 'Record usage events for Stripe Billing Meters',
    description:
      `Stores 1 to ${MAX_USAGE_EVENTS_PER_BATCH} events in the outbox and answers once they are durable; ` +
      'a sender delivers them to Stripe. Idempotent by event `id`: an event sent again is `duplicate` and ' +
      'changes nothing; an `id` already stored with different fields is reported as `conflict` per event ' +
      '(the rest of the batch is stored). An event with an unknown meter, a timestamp out of range or an invalid ' +
      'field is answered `refused` with a `reason` and parked (`GET /api/v1/usage-events/refused`); the rest ' +
      'of the batch is stored. Only a batch that is not a list of objects with valid ids is refused whole (400).',
    tags: ['Usage'],
    security,
    request: { body: jsonBody(ZUsageEventsRequest) },
    responses: {
      200: jsonResponse(
        'Every event is stored, duplicate, conflicting or refused; see `results`.',
        ZUsageEventsResponse,
      ),
      ...buildErrorResponses([
        ...COMMON_ERRORS,
        'validation_failed',
        'deserialization_error',
        'payload_too_large',
        'unsupported_media_type',
      ]),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage-events/billable/{user_id}',
    operationId: 'getUsageBillable',
    summary: 'Would usage of a user land on an invoice',
    description:
      "True when an item of the user's subscription in a billing status has a price on the meter (the gateway's paid lanes ask this). Usage that is not billable is held, never sent (docs/billing.md).",
    tags: ['Usage'],
    security,
    request: { params: ZUserParams, query: ZBillableQuery },
    responses: {
      200: jsonResponse('The answer.', ZBillableResponse),
      ...buildErrorResponses([...COMMON_ERRORS, 'validation_failed', 'stripe_unavailable']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage-events/refused',
    operationId: 'listRefusedUsageEvents',
    summary: 'Usage events refused and parked',
    description:
      'Events `POST /api/v1/usage-events` answered `refused`, newest first, each with the event as posted. ' +
      'Fix the cause (e.g. configure the meter) and post the events again: a stored event leaves this list.',
    tags: ['Usage'],
    security,
    request: { query: ZMeterErrorReportsQuery },
    responses: {
      200: jsonResponse('Parked refused events.', ZUsageEventRefusalsResponse),
      ...buildErrorResponses([...COMMON_ERRORS, 'validation_failed']),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/usage-events/error-reports',
    operationId: 'listMeterErrorReports',
    summary: "Stripe's meter error reports",
    description:
      'The `v1.billing.meter.error_report_triggered` events Stripe sent: meter events it rejected after accepting them. Newest first.',
    tags: ['Usage'],
    security,
    request: { query: ZMeterErrorReportsQuery },
    responses: {
      200: jsonResponse('Recorded reports.', ZMeterErrorReportsResponse),
      ...buildErrorResponses([...COMMON_ERRORS, 'validation_failed']),
    },
  });
  registerStripeWebhookPath(registry, {
    path: '/webhooks/stripe/events',
    operationId: 'receiveStripeThinEvent',
    summary: 'Stripe event destination (thin events)',
    description:
      'Called by Stripe, not by clients: an event destination with thin ("v2") payloads. Verified against the Stripe-Signature header; `v1.billing.meter.error_report_triggered` is fetched and recorded, other types are acknowledged.',
    body: z.object({ id: z.string(), object: z.literal('v2.core.event'), type: z.string() }).loose(),
  });
}
