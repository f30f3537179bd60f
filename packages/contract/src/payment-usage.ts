import { z } from 'zod';
import { ZIsoTimestamp } from './common';
import { ZUserId } from './payment';

/** Most events one `POST /api/v1/usage-events` call may carry. */
export const MAX_USAGE_EVENTS_PER_BATCH = 1000;
/** Largest value of one usage event (Postgres integer); bill larger amounts as several events. */
export const MAX_USAGE_EVENT_VALUE = 2_147_483_647;

/** A meter name as configured in PAYMENT_USAGE_METERS: lower-case letters, digits, `_`, `-`, `.`. */
export const ZMeterName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'meter names are 1 to 64 of a-z 0-9 _ - .')
  .meta({ description: 'Configured meter name (PAYMENT_USAGE_METERS).', example: 'ai_tokens' });

/** One usage event. `id` is what makes it idempotent, and is Stripe's meter event `identifier`. */
export const ZUsageEvent = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_:.-]{0,99}$/, 'event ids are 1 to 100 of A-Z a-z 0-9 _ : . -')
      .meta({
        description:
          'Unique event id (e.g. the gateway request id). Stripe identifier; at most 100 characters.',
        example: '0b7d4c8e-9a51-4f1c-8e2d-6f4b8e7c103f',
      }),
    user_id: ZUserId,
    meter: ZMeterName.optional().meta({ description: 'Meter name; the configured default when omitted.' }),
    value: z
      .number()
      .int()
      .min(1)
      .max(MAX_USAGE_EVENT_VALUE)
      .meta({ description: 'Usage to add to the meter, a positive integer.', example: 1250 }),
    timestamp: ZIsoTimestamp.meta({
      description:
        'When the usage happened; within the past 35 days (Stripe) and at most PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS ahead of payment.',
    }),
  })
  .meta({ id: 'UsageEvent' });
export type UsageEvent = z.infer<typeof ZUsageEvent>;

/** `POST /api/v1/usage-events`. */
export const ZUsageEventsRequest = z
  .object({ events: z.array(ZUsageEvent).min(1).max(MAX_USAGE_EVENTS_PER_BATCH) })
  .meta({ id: 'UsageEventsRequest' });
export type UsageEventsRequest = z.infer<typeof ZUsageEventsRequest>;
/** What a client passes to `POST /api/v1/usage-events` (payment), before defaults apply. */
export type RecordUsageEventsInput = z.input<typeof ZUsageEventsRequest>;

/**
 * The batch as the endpoint reads it first: every element an object with a
 * valid `id`, the rest checked per event, so that one bad event is answered
 * `refused` and the rest of the batch is stored.
 */
export const ZUsageEventsBatch = z.object({
  events: z
    .array(z.looseObject({ id: ZUsageEvent.shape.id }))
    .min(1)
    .max(MAX_USAGE_EVENTS_PER_BATCH),
});

/**
 * What became of one event: `stored` (new), `duplicate` (the same event was
 * already stored: nothing changed), `conflict` (another event with this id and
 * different fields is stored; this one was dropped: a bug of the caller),
 * `refused` (not stored, see `reason`; parked for an operator, docs/billing.md).
 */
export const USAGE_EVENT_OUTCOMES = ['stored', 'duplicate', 'conflict', 'refused'] as const;

/**
 * Why an event was refused: its meter is not configured, its timestamp is
 * beyond Stripe's 35 days or ahead of payment's clock by more than the
 * tolerated skew (PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS), or a field is invalid.
 */
export const USAGE_EVENT_REFUSAL_REASONS = [
  'unknown_meter',
  'timestamp_too_old',
  'timestamp_in_future',
  'invalid_event',
] as const;
export type UsageEventRefusalReason = (typeof USAGE_EVENT_REFUSAL_REASONS)[number];

/** One event's answer. `reason` and `message` only with `refused`. */
export const ZUsageEventResult = z
  .object({
    id: z.string(),
    outcome: z.enum(USAGE_EVENT_OUTCOMES),
    reason: z.enum(USAGE_EVENT_REFUSAL_REASONS).optional(),
    message: z.string().optional(),
  })
  .meta({ id: 'UsageEventResult' });
export type UsageEventResult = z.infer<typeof ZUsageEventResult>;

/** Answer of `POST /api/v1/usage-events`: sent once every stored event is durable. */
export const ZUsageEventsResponse = z
  .object({
    stored: z.number().int().meta({ description: 'Events stored by this call.' }),
    duplicates: z.number().int().meta({ description: 'Events already stored with the same fields.' }),
    conflicts: z
      .number()
      .int()
      .meta({ description: 'Events refused: their id is stored with other fields.' }),
    refused: z.number().int().meta({
      description: 'Events refused for a reason of their own (see `results`), parked for an operator.',
    }),
    results: z.array(ZUsageEventResult).meta({ description: 'One entry per event, in request order.' }),
  })
  .meta({ id: 'UsageEventsResponse' });
export type UsageEventsResponse = z.infer<typeof ZUsageEventsResponse>;

/** One parked refused event (`GET /api/v1/usage-events/refused`). */
export const ZUsageEventRefusal = z
  .object({
    id: z.string(),
    reason: z.enum(USAGE_EVENT_REFUSAL_REASONS),
    message: z.string(),
    event: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The event as posted; post it again once fixed.' }),
    times: z.number().int().meta({ description: 'How often it was posted and refused.' }),
    first_refused_at: ZIsoTimestamp,
    last_refused_at: ZIsoTimestamp,
  })
  .meta({ id: 'UsageEventRefusal' });
export type UsageEventRefusal = z.infer<typeof ZUsageEventRefusal>;

/** `GET /api/v1/usage-events/refused`: newest first. */
export const ZUsageEventRefusalsResponse = z
  .object({ refusals: z.array(ZUsageEventRefusal) })
  .meta({ id: 'UsageEventRefusalsResponse' });
export type UsageEventRefusalsResponse = z.infer<typeof ZUsageEventRefusalsResponse>;

/** One `v1.billing.meter.error_report_triggered` event as recorded. */
export const ZMeterErrorReport = z
  .object({
    id: z.string().meta({ description: 'Stripe event id.' }),
    meter_id: z.string().nullable(),
    summary: z.string().meta({ description: "Stripe's developer message summary." }),
    error_count: z.number().int(),
    error_types: z.array(z.object({ code: z.string(), error_count: z.number().int() }).loose()),
    validation_start: ZIsoTimestamp.nullable(),
    validation_end: ZIsoTimestamp.nullable(),
    received_at: ZIsoTimestamp,
  })
  .meta({ id: 'MeterErrorReport' });
export type MeterErrorReport = z.infer<typeof ZMeterErrorReport>;

/** `GET /api/v1/usage-events/error-reports`: newest first. */
export const ZMeterErrorReportsResponse = z
  .object({ reports: z.array(ZMeterErrorReport) })
  .meta({ id: 'MeterErrorReportsResponse' });
export type MeterErrorReportsResponse = z.infer<typeof ZMeterErrorReportsResponse>;

/** `GET /api/v1/usage-events/error-reports?limit=` (and `/refused`): 1 to 100, default 20. */
export const ZMeterErrorReportsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** `GET /api/v1/usage-events/billable/{user_id}?meter=`: the meter; the configured default when omitted. */
export const ZBillableQuery = z.object({ meter: ZMeterName.optional() });

/**
 * Whether usage of the user on the meter, now, would land on an invoice: an
 * item of a subscription in a billing status (active, trialing, past_due)
 * has a price on that meter (in the meter's configured currency).
 */
export const ZBillableResponse = z
  .object({
    billable: z.boolean(),
    meter: z.string(),
    subscription_id: z.string().nullable(),
    price_id: z.string().nullable(),
    reason: z.string().nullable().meta({ description: 'Why not, when not billable.' }),
  })
  .meta({ id: 'BillableResponse' });
export type BillableResponse = z.infer<typeof ZBillableResponse>;
