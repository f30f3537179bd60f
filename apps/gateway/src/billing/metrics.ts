import { Counter, Gauge, type Registry } from '@platform/logging';

/** The shipper's /metrics series (see docs/billing.md, Monitoring). */
export type ShipperMetrics = {
  events: Counter<'outcome'>;
  skipped: Counter<'reason'>;
  conflicts: Counter;
  refused: Counter<'reason'>;
  failures: Counter;
  lagSeconds: Gauge;
  lastShipped: Gauge;
  active: Gauge;
};

export function createShipperMetrics(registry: Registry): ShipperMetrics {
  const registers = [registry];
  return {
    events: new Counter({
      name: 'gateway_billing_events_shipped_total',
      help: 'Usage events payment acknowledged, by outcome (stored, duplicate)',
      labelNames: ['outcome'],
      registers,
    }),
    skipped: new Counter({
      name: 'gateway_billing_records_skipped_total',
      help: 'Ledger records that produced no usage event, by reason (byok, free_lane, zero, too_large)',
      labelNames: ['reason'],
      registers,
    }),
    conflicts: new Counter({
      name: 'gateway_billing_event_conflicts_total',
      help: 'Usage events payment refused because their id holds other fields',
      registers,
    }),
    refused: new Counter({
      name: 'gateway_billing_events_refused_total',
      help: 'Usage events payment refused and parked, by reason (unknown_meter, timestamp_too_old, timestamp_in_future, invalid_event)',
      labelNames: ['reason'],
      registers,
    }),
    failures: new Counter({
      name: 'gateway_billing_ship_failures_total',
      help: 'Shipping rounds that failed (payment or the database unreachable, or an error answer)',
      registers,
    }),
    lagSeconds: new Gauge({
      name: 'gateway_billing_lag_seconds',
      help: 'Age of the oldest ledger record not yet acknowledged by payment (0 when caught up)',
      registers,
      aggregator: 'max',
    }),
    lastShipped: new Gauge({
      name: 'gateway_billing_last_shipped_timestamp_seconds',
      help: 'When payment last acknowledged a batch',
      registers,
      aggregator: 'max',
    }),
    active: new Gauge({
      name: 'gateway_billing_shipper_active',
      help: '1 in the process holding the shipper lease',
      registers,
      aggregator: 'sum',
    }),
  };
}
