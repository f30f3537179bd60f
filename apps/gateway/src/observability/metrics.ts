import { Counter, Histogram, type Registry } from '@platform/logging';
import type { LedgerRecord } from '../usage/record';

/**
 * The metrics the dashboards and alerts (infra/prometheus, infra/grafana) need
 * per target and model, beside ai/metrics.ts' per-provider ones: error rate
 * per target, time to first token and latency per model, spend. Label values
 * come from the lanes config (providers, models, lanes), never from a client,
 * so the series stay as few as the configured targets.
 */
export type TargetMetrics = {
  /** One upstream attempt ended (ai/fallback.ts); a stream's success is its first token. */
  targetAttempt(endpoint: string, provider: string, model: string, outcome: string, seconds: number): void;
  /** An AI request ended with its ledger record (ai/accounting.ts). */
  requestFinished(record: LedgerRecord): void;
};

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** 2xx, 4xx, 5xx (499, the client gone, is a 4xx). */
function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

export function createTargetMetrics(registry: Registry): TargetMetrics {
  const registers = [registry];
  const attempts = new Counter({
    name: 'ai_target_attempts_total',
    help: 'Upstream attempts by target (provider and model) and outcome: the error rate per target',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers,
  });
  const firstToken = new Histogram({
    name: 'ai_time_to_first_token_seconds',
    help: 'Streams: time from the attempt that answered until its first content, by provider and model',
    labelNames: ['provider', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const requests = new Counter({
    name: 'ai_requests_total',
    help: 'AI requests ended, by endpoint, lane, model that answered (none when none did) and status class',
    labelNames: ['endpoint', 'lane', 'model', 'status_class'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'ai_request_duration_seconds',
    help: 'AI requests from admission to the usage record (the whole answer, streams included), by endpoint and model',
    labelNames: ['endpoint', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const spend = new Counter({
    name: 'ai_spend_micros_total',
    help: 'Cost of AI requests as the ledger priced them, in millionths of the currency, by lane, provider, model and currency',
    labelNames: ['lane', 'provider', 'model', 'currency'] as const,
    registers,
  });
  return {
    targetAttempt(endpoint, provider, model, outcome, seconds) {
      attempts.inc({ provider, model, outcome });
      if (outcome === 'success' && endpoint.startsWith('stream'))
        firstToken.observe({ provider, model }, seconds);
    },
    requestFinished(record) {
      const model = record.model ?? 'none';
      const lane = record.lane ?? 'none';
      requests.inc({ endpoint: record.endpoint, lane, model, status_class: statusClass(record.status) });
      duration.observe({ endpoint: record.endpoint, model }, record.latencyMs / 1000);
      if (record.costMicros > 0)
        spend.inc(
          { lane, provider: record.provider ?? 'none', model, currency: record.currency },
          record.costMicros,
        );
    },
  };
}
