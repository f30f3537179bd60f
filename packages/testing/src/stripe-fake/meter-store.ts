import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import type { StripeObject } from './objects';

/** Stripe-looking id (store.ts has the same; kept here so store.ts can hold a MeterStore without an import cycle). */
function makeId(prefix: string, length: number): string {
  return `${prefix}_${randomBytes(length).toString('base64url').replace(/[-_]/g, 'x').slice(0, length)}`;
}

/** A billing meter as the API returns it (stripe-node's `Stripe.Billing.Meter`). */
export type FakeMeter = Stripe.Billing.Meter;

/** One meter event the fake received and accepted (`identifier` unique within 24 h). */
export type FakeMeterEvent = {
  identifier: string;
  event_name: string;
  payload: Record<string, string>;
  /** Unix seconds of the usage. */
  timestamp: number;
  /** Unix seconds when the fake accepted it. */
  created: number;
  /** Set when Stripe would reject it after accepting (unknown customer, bad value): not counted. */
  rejected?: { code: string; message: string };
};

/** A v2 (thin) event kept for `GET /v2/core/events/:id`. */
export type FakeV2Event = StripeObject<'v2.core.event'> & {
  type: string;
  created: string;
  livemode: false;
  related_object: { id: string; type: string; url: string } | null;
  data: Record<string, unknown>;
};

/** The Billing Meters part of the fake's account. */
export type MeterStore = {
  meters: Map<string, FakeMeter>;
  /** Accepted events in arrival order. */
  events: FakeMeterEvent[];
  /** identifier -> when it was first accepted (unix seconds), for the 24 h de-duplication. */
  identifiers: Map<string, number>;
  /** Creates refused because their identifier was seen within 24 h. */
  duplicates: number;
  v2Events: Map<string, FakeV2Event>;
};

export function createMeterStore(): MeterStore {
  return { meters: new Map(), events: [], identifiers: new Map(), duplicates: 0, v2Events: new Map() };
}

export type MeterInput = {
  event_name: string;
  display_name?: string;
  formula?: 'sum' | 'count' | 'last';
  customerPayloadKey?: string;
  valuePayloadKey?: string;
};

export function addMeter(store: MeterStore, input: MeterInput, now: number): FakeMeter {
  const meter: FakeMeter = {
    id: makeId('mtr', 24),
    object: 'billing.meter',
    created: now,
    customer_mapping: { event_payload_key: input.customerPayloadKey ?? 'stripe_customer_id', type: 'by_id' },
    default_aggregation: { formula: input.formula ?? 'sum' },
    display_name: input.display_name ?? input.event_name,
    event_name: input.event_name,
    event_time_window: null,
    livemode: false,
    status: 'active',
    status_transitions: { deactivated_at: null },
    updated: now,
    value_settings: { event_payload_key: input.valuePayloadKey ?? 'value' },
  };
  store.meters.set(meter.id, meter);
  return meter;
}

export function activeMeterFor(store: MeterStore, eventName: string): FakeMeter | undefined {
  return [...store.meters.values()].find((m) => m.event_name === eventName && m.status === 'active');
}

/**
 * The meter's aggregate for one customer over [start, end): what event
 * summaries report, and what tests compare with the outbox. Rejected events
 * never count; `sum` adds values, `count` counts events, `last` keeps the latest.
 */
export function meterTotal(
  store: MeterStore,
  meter: FakeMeter,
  customer: string,
  start = Number.NEGATIVE_INFINITY,
  end = Number.POSITIVE_INFINITY,
  /** Only events accepted up to then (unix seconds): what a finalized invoice froze. */
  acceptedBy = Number.POSITIVE_INFINITY,
): number {
  let total = 0;
  for (const event of store.events) {
    if (event.rejected || event.event_name !== meter.event_name || event.created > acceptedBy) continue;
    if (event.payload[meter.customer_mapping.event_payload_key] !== customer) continue;
    if (event.timestamp < start || event.timestamp >= end) continue;
    const value = Number(event.payload[meter.value_settings.event_payload_key]);
    if (meter.default_aggregation.formula === 'count') total += 1;
    else if (meter.default_aggregation.formula === 'last') total = value;
    else total += value;
  }
  return total;
}

/**
 * Builds a `v1.billing.meter.error_report_triggered` event from the meter's
 * rejected events (or the given counts), stores it for `GET /v2/core/events/:id`
 * and returns it.
 */
export function addMeterErrorReport(
  store: MeterStore,
  meter: FakeMeter,
  now: number,
  errorTypes?: Array<{ code: string; error_count: number }>,
): FakeV2Event {
  const rejected = store.events.filter((e) => e.rejected && e.event_name === meter.event_name);
  const types =
    errorTypes ??
    [...new Set(rejected.map((e) => e.rejected?.code ?? ''))].map((code) => ({
      code,
      error_count: rejected.filter((e) => e.rejected?.code === code).length,
    }));
  const errorCount = types.reduce((sum, t) => sum + t.error_count, 0);
  const event: FakeV2Event = {
    id: makeId('evt_test', 24),
    object: 'v2.core.event',
    type: 'v1.billing.meter.error_report_triggered',
    created: new Date(now * 1000).toISOString(),
    livemode: false,
    related_object: { id: meter.id, type: 'billing.meter', url: `/v1/billing/meters/${meter.id}` },
    data: {
      developer_message_summary: `${errorCount} meter events for ${meter.event_name} failed validation`,
      reason: {
        error_count: errorCount,
        error_types: types.map((t) => ({
          ...t,
          sample_errors: rejected
            .filter((e) => e.rejected?.code === t.code)
            .slice(0, 3)
            .map((e) => ({
              error_message: e.rejected?.message ?? '',
              request: { identifier: e.identifier },
            })),
        })),
      },
      validation_start: new Date((now - 3600) * 1000).toISOString(),
      validation_end: new Date(now * 1000).toISOString(),
    },
  };
  store.v2Events.set(event.id, event);
  return event;
}

/** The thin notification Stripe POSTs to an event destination for `event`. */
export function thinNotification(event: FakeV2Event): string {
  const { data: _data, ...thin } = event;
  return JSON.stringify(thin);
}
