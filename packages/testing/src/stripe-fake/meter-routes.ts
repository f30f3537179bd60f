import type Stripe from 'stripe';
import { invalidRequest, resourceMissing } from './errors';
import { activeMeterFor, addMeter, type FakeMeterEvent, meterTotal } from './meter-store';
import { anyOf, type ParamSpec, p } from './params';
import { listParams, paginate, type Route } from './route';

/** Params of `billing.meters.create`, keyed as stripe-node's `MeterCreateParams` (a missing or extra key fails typecheck). */
const meterCreateParams = {
  default_aggregation: p.object(
    { formula: p.oneOf(['count', 'last', 'sum'], { required: true }) },
    { required: true },
  ),
  display_name: p.string({ required: true }),
  event_name: p.string({ required: true }),
  customer_mapping: p.object({
    event_payload_key: p.string({ required: true }),
    type: p.oneOf(['by_id'], { required: true }),
  }),
  event_time_window: p.oneOf(['day', 'hour']),
  expand: p.expand(),
  value_settings: p.object({ event_payload_key: p.string({ required: true }) }),
} satisfies Record<keyof Stripe.Billing.MeterCreateParams, ParamSpec>;

const meterListParams = {
  ...listParams,
  expand: p.expand(),
  status: p.oneOf(['active', 'inactive']),
} satisfies Record<keyof Stripe.Billing.MeterListParams, ParamSpec>;

const summaryParams = {
  ...listParams,
  customer: p.string({ required: true }),
  start_time: p.integer({ required: true }),
  end_time: p.integer({ required: true }),
  expand: p.expand(),
  value_grouping_window: p.oneOf(['day', 'hour']),
  ...anyOf('customer_account'),
} satisfies Partial<
  Record<keyof Stripe.Billing.MeterListEventSummariesParams | 'customer_account', ParamSpec>
>;

const meterEventParams = {
  event_name: p.string({ required: true }),
  payload: { kind: 'metadata', required: true },
  expand: p.expand(),
  identifier: p.string(),
  timestamp: p.integer(),
} satisfies Record<keyof Stripe.Billing.MeterEventCreateParams, ParamSpec>;

/** Stripe's rolling window for `identifier` uniqueness. */
const IDENTIFIER_WINDOW_SECONDS = 24 * 3600;
const MAX_PAST_SECONDS = 35 * 24 * 3600;
const MAX_FUTURE_SECONDS = 5 * 60;

function windows(start: number, end: number, grouping: unknown): Array<[number, number]> {
  const size = grouping === 'day' ? 86_400 : grouping === 'hour' ? 3600 : 0;
  if (size === 0) return [[start, end]];
  const out: Array<[number, number]> = [];
  for (let at = start; at < end; at += size) out.push([at, Math.min(at + size, end)]);
  return out;
}

export const meterRoutes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/billing\/meters$/,
    params: meterCreateParams,
    handle({ store, params }) {
      const eventName = params.event_name as string;
      if (activeMeterFor(store.billingMeters, eventName)) {
        throw invalidRequest(`An active meter with event_name '${eventName}' already exists.`, 'event_name');
      }
      const aggregation = params.default_aggregation as { formula: 'sum' | 'count' | 'last' };
      const mapping = params.customer_mapping as { event_payload_key: string } | undefined;
      const value = params.value_settings as { event_payload_key: string } | undefined;
      return addMeter(
        store.billingMeters,
        {
          event_name: eventName,
          display_name: params.display_name as string,
          formula: aggregation.formula,
          customerPayloadKey: mapping?.event_payload_key,
          valuePayloadKey: value?.event_payload_key,
        },
        store.now(),
      );
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/billing\/meters$/,
    params: meterListParams,
    handle({ store, params }) {
      const meters = [...store.billingMeters.meters.values()].filter(
        (m) => params.status === undefined || m.status === params.status,
      );
      return paginate(meters, params, '/v1/billing/meters', 'billing.meter');
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/billing\/meters\/([^/]+)$/,
    params: { expand: p.expand() },
    handle({ store, pathParams: [id = ''] }) {
      const meter = store.billingMeters.meters.get(id);
      if (!meter) throw resourceMissing('billing.meter', id, 'id');
      return meter;
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/billing\/meters\/([^/]+)\/event_summaries$/,
    params: summaryParams,
    handle({ store, params, pathParams: [id = ''] }) {
      const meter = store.billingMeters.meters.get(id);
      if (!meter) throw resourceMissing('billing.meter', id, 'id');
      const start = params.start_time as number;
      const end = params.end_time as number;
      if (end <= start) throw invalidRequest('end_time must be after start_time.', 'end_time');
      const all = windows(start, end, params.value_grouping_window).map(([from, to]) => ({
        id: `mtrusum_${meter.id.slice(4)}_${from}`,
        object: 'billing.meter_event_summary' as const,
        aggregated_value: meterTotal(store.billingMeters, meter, params.customer as string, from, to),
        end_time: to,
        livemode: false,
        meter: meter.id,
        start_time: from,
      }));
      const limit = typeof params.limit === 'number' ? params.limit : 10;
      const after = all.findIndex((s) => s.id === params.starting_after);
      const data = all.slice(after + 1, after + 1 + limit);
      return {
        object: 'list',
        data,
        has_more: after + 1 + limit < all.length,
        url: `/v1/billing/meters/${meter.id}/event_summaries`,
      };
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/billing\/meter_events$/,
    params: meterEventParams,
    handle({ store, params }) {
      const meters = store.billingMeters;
      const now = store.now();
      const eventName = params.event_name as string;
      const meter = activeMeterFor(meters, eventName);
      if (!meter)
        throw invalidRequest(`No active meter was found for event_name '${eventName}'.`, 'event_name');
      const timestamp = (params.timestamp as number | undefined) ?? now;
      if (timestamp < now - MAX_PAST_SECONDS)
        throw invalidRequest(
          'Timestamp must be within the past 35 calendar days.',
          'timestamp',
          'timestamp_too_far_in_past',
        );
      if (timestamp > now + MAX_FUTURE_SECONDS)
        throw invalidRequest(
          'Timestamp must be no more than 5 minutes in the future.',
          'timestamp',
          'timestamp_in_future',
        );
      const identifier = (params.identifier as string | undefined) ?? `mevt_${meters.events.length}_${now}`;
      const seen = meters.identifiers.get(identifier);
      if (seen !== undefined && now - seen < IDENTIFIER_WINDOW_SECONDS) {
        meters.duplicates++;
        throw invalidRequest(
          `An event with identifier '${identifier}' already exists.`,
          'identifier',
          'resource_already_exists',
        );
      }
      const payload = params.payload as Record<string, string>;
      const event: FakeMeterEvent = { identifier, event_name: eventName, payload, timestamp, created: now };
      // Stripe checks the customer and the value after accepting; failures come back in an error report.
      const customer = payload[meter.customer_mapping.event_payload_key];
      const value = payload[meter.value_settings.event_payload_key];
      if (customer === undefined)
        event.rejected = { code: 'meter_event_no_customer_defined', message: 'No customer' };
      else if (!store.customers.has(customer))
        event.rejected = {
          code: 'meter_event_customer_not_found',
          message: `No such customer: '${customer}'`,
        };
      else if (value === undefined || !/^-?\d+(\.\d+)?$/.test(value))
        event.rejected = { code: 'meter_event_invalid_value', message: `Invalid value: '${value}'` };
      meters.identifiers.set(identifier, now);
      meters.events.push(event);
      return {
        object: 'billing.meter_event',
        created: now,
        event_name: eventName,
        identifier,
        livemode: false,
        payload,
        timestamp,
      } satisfies Stripe.Billing.MeterEvent;
    },
  },
  {
    method: 'GET',
    pattern: /^\/v2\/core\/events\/([^/]+)$/,
    params: {},
    handle({ store, pathParams: [id = ''] }) {
      const event = store.billingMeters.v2Events.get(id);
      if (!event) throw resourceMissing('event', id, 'id');
      return event;
    },
  },
];
