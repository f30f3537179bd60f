import { Counter, Gauge, type Registry } from '@platform/logging';
import { type Clock, systemClock } from '@platform/service-kit';
import type { PrismaClient } from '../generated/prisma/client';
import { type OutboxStats, readOutboxStats } from './repo';

/** Why a meter event call did not succeed; bounded label values. */
export type SendFailureKind = 'rate_limited' | 'server_error' | 'connection' | 'refused' | 'customer';

export type UsageMetrics = {
  sent(): void;
  failed(kind: SendFailureKind): void;
  errorReport(): void;
  /** Rows the sender held instead of sending: no billable item (unbillable) or past their invoice (late). */
  held(status: 'unbillable' | 'late' | 'review', n: number): void;
  /** An event `POST /api/v1/usage-events` refused and parked. */
  refused(reason: string): void;
  /** The outbox's current state, read from the database (shared by every process). */
  stats(): Promise<OutboxStats>;
};

/**
 * Outbox lag and sender outcomes on the app's /metrics registry. The gauges
 * read the database at scrape time; every worker sees the same table, so the
 * cluster aggregate takes their max instead of their sum.
 *
 * Over 80 lines: the usage metric families, registered together against one cached read.
 */
export function createUsageMetrics(
  registry: Registry,
  prisma: PrismaClient,
  clock: Clock = systemClock,
): UsageMetrics {
  const sent = new Counter({
    name: 'payment_usage_events_sent_total',
    help: 'Usage events Stripe acknowledged',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'payment_usage_send_failures_total',
    help: 'Meter event calls that failed, by kind (retried unless refused)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const reports = new Counter({
    name: 'payment_meter_error_reports_total',
    help: 'Stripe meter error reports (v1.billing.meter.error_report_triggered) received',
    registers: [registry],
  });
  const refused = new Counter({
    name: 'payment_usage_events_refused_total',
    help: 'Usage events refused at ingest and parked, by reason (GET /api/v1/usage-events/refused)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const heldTotal = new Counter({
    name: 'payment_usage_events_held_total',
    help: 'Usage events the sender held instead of sending, by state (unbillable, late, review)',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  // The gauges read a snapshot at most a second old, refreshed once per scrape and waited
  // for at most half a second: a slow or stopped database leaves the last values (or none)
  // and never fails or stalls /metrics.
  let last: { at: number; stats: OutboxStats } | undefined;
  let refreshing: Promise<void> | undefined;
  const refresh = () => {
    refreshing ??= readOutboxStats(prisma)
      .then(
        (stats) => {
          last = { at: clock(), stats };
        },
        () => undefined,
      )
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };
  const snapshot = async (): Promise<OutboxStats | undefined> => {
    if (!last || clock() - last.at > 1000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 500);
        timer.unref();
      });
      await Promise.race([refresh(), timeout]).finally(() => clearTimeout(timer));
    }
    return last?.stats;
  };
  const gauge = (name: string, help: string, pick: (s: OutboxStats) => number) =>
    new Gauge({
      name,
      help,
      aggregator: 'max',
      registers: [registry],
      async collect() {
        const stats = await snapshot();
        if (stats) this.set(pick(stats));
      },
    });
  gauge('payment_usage_outbox_pending', 'Usage events not yet acknowledged by Stripe', (s) => s.pending);
  gauge(
    'payment_usage_outbox_failed',
    'Usage events Stripe refused for good (status failed)',
    (s) => s.failed,
  );
  gauge(
    'payment_usage_outbox_oldest_pending_seconds',
    'Age of the oldest usage event not yet acknowledged by Stripe',
    (s) => s.oldestPendingAgeSeconds,
  );
  new Gauge({
    name: 'payment_usage_outbox_held',
    help: 'Usage events held and not sent, by state: unbillable (no subscription item with a price on the meter), late (their invoice is finalized), review (maybe at Stripe past 24 h)',
    labelNames: ['state'] as const,
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const stats = await snapshot();
      if (stats) for (const [state, h] of Object.entries(stats.held)) this.set({ state }, h.count);
    },
  });
  new Gauge({
    name: 'payment_usage_outbox_held_value',
    help: 'Sum of the values of held usage events, by state (what is not on an invoice)',
    labelNames: ['state'] as const,
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const stats = await snapshot();
      if (stats) for (const [state, h] of Object.entries(stats.held)) this.set({ state }, h.value);
    },
  });
  return {
    sent: () => sent.inc(),
    failed: (kind) => failures.inc({ kind }),
    errorReport: () => reports.inc(),
    refused: (reason) => refused.inc({ reason }),
    held: (state, n) => heldTotal.inc({ state }, n),
    stats: () => readOutboxStats(prisma),
  };
}
