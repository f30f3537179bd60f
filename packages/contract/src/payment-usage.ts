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
      description: 'When the usage happened; within the past 35 days and at most 5 minutes ahead (Stripe).',
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
 * What became of one event: `stored` (new), `duplicate` (the same event was
 * already stored: nothing changed), `conflict` (another event with this id and
 * different fields is stored; this one was dropped: a bug of the caller).
 */
export const USAGE_EVENT_OUTCOMES = ['stored', 'duplicate', 'conflict'] as const;

/** Answer of `POST /api/v1/usage-events`: sent once every stored event is durable. */
export const ZUsageEventsResponse = z
  .object({
    stored: z.number().int().meta({ description: 'Events stored by this call.' }),
    duplicates: z.number().int().meta({ description: 'Events already stored with the same fields.' }),
    conflicts: z
      .number()
      .int()
      .meta({ description: 'Events refused: their id is stored with other fields.' }),
    results: z
      .array(z.object({ id: z.string(), outcome: z.enum(USAGE_EVENT_OUTCOMES) }))
      .meta({ description: 'One entry per event, in request order.' }),
  })
  .meta({ id: 'UsageEventsResponse' });
export type UsageEventsResponse = z.infer<typeof ZUsageEventsResponse>;

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

/** `GET /api/v1/usage-events/error-reports?limit=`: 1 to 100, default 20. */
export const ZMeterErrorReportsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
