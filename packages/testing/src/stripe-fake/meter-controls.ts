import {
  addMeter,
  addMeterErrorReport,
  type FakeMeter,
  type FakeV2Event,
  type MeterInput,
  meterTotal,
  thinNotification,
} from './meter-store';
import type { StripeFault } from './server';
import type { StripeStore } from './store';

/** Test controls of the fake's Billing Meters. */
export type MeterControls = {
  /** Creates an active meter (as `billing.meters.create` would). */
  seed(input: MeterInput): FakeMeter;
  /** The meter's aggregate for a customer over all time (accepted, not rejected, events). */
  total(eventName: string, customer: string): number;
  /** Events accepted per identifier; any value above 1 would be a double count (never, given the 24 h rule). */
  acceptedCount(identifier: string): number;
  /** Every accepted meter event, in arrival order. */
  events(): ReadonlyArray<{ identifier: string; event_name: string; payload: Record<string, string> }>;
  /** Creates refused as duplicates of an identifier seen within 24 h. */
  duplicates(): number;
  /**
   * Makes `POST /v1/billing/meter_events` answer `status` (429 or 500) for
   * `forMs`, with `Retry-After` when given: Stripe rate limiting or failing for a while.
   */
  outage(opts: { status: 429 | 500; forMs: number; retryAfterSeconds?: number }): void;
  /**
   * A `v1.billing.meter.error_report_triggered` event for the meter (from its
   * rejected events unless `errorTypes` is given), fetchable at
   * `GET /v2/core/events/:id`; `notification` is the thin body to sign and POST.
   */
  errorReport(
    eventName: string,
    errorTypes?: Array<{ code: string; error_count: number }>,
  ): { event: FakeV2Event; notification: string };
};

export function createMeterControls(
  store: StripeStore,
  addFault: (fault: StripeFault) => void,
): MeterControls {
  const meters = store.billingMeters;
  const meterNamed = (eventName: string) => {
    const meter = [...meters.meters.values()].find((m) => m.event_name === eventName);
    if (!meter) throw new Error(`stripe fake: no meter for event_name ${eventName}`);
    return meter;
  };
  return {
    seed: (input) => addMeter(meters, input, store.now()),
    total: (eventName, customer) => meterTotal(meters, meterNamed(eventName), customer),
    acceptedCount: (identifier) => meters.events.filter((e) => e.identifier === identifier).length,
    events: () => meters.events.filter((e) => !e.rejected),
    duplicates: () => meters.duplicates,
    outage: ({ status, forMs, retryAfterSeconds }) =>
      addFault({
        path: /^\/v1\/billing\/meter_events$/,
        method: 'POST',
        status,
        type: status === 429 ? 'rate_limit_error' : 'api_error',
        untilMs: Date.now() + forMs,
        ...(retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } }),
      }),
    errorReport: (eventName, errorTypes) => {
      const event = addMeterErrorReport(meters, meterNamed(eventName), store.now(), errorTypes);
      return { event, notification: thinNotification(event) };
    },
  };
}
