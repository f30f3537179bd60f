import { Histogram, type Registry } from '@platform/logging';
import type { LedgerRecord } from '../usage/record';
import { batchedCounter } from './batched-counter';

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
  // The counters are batched (batched-counter.ts): a request adds to a running sum, not a prom-client series.
  const attempts = batchedCounter({
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
  const requests = batchedCounter({
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
  const spend = batchedCounter({
    name: 'ai_spend_micros_total',
    help: 'Cost of AI requests as the ledger priced them, in millionths of the currency, by lane, provider, model and currency',
    labelNames: ['lane', 'provider', 'model', 'currency'] as const,
    registers,
  });
  return {
    targetAttempt(endpoint, provider, model, outcome, seconds) {
      attempts.add(1, () => ({ provider, model, outcome }), provider, model, outcome);
      if (outcome === 'success' && endpoint.startsWith('stream'))
        firstToken.observe({ provider, model }, seconds);
    },
    requestFinished(record) {
      const model = record.model ?? 'none';
      const lane = record.lane ?? 'none';
      const { endpoint, status } = record;
      requests.add(
        1,
        () => ({ endpoint, lane, model, status_class: statusClass(status) }),
        endpoint,
        lane,
        model,
        status,
      );
      duration.observe({ endpoint, model }, record.latencyMs / 1000);
      if (record.costMicros > 0) {
        const provider = record.provider ?? 'none';
        const currency = record.currency;
        spend.add(
          record.costMicros,
          () => ({ lane, provider, model, currency }),
          lane,
          provider,
          model,
          currency,
        );
      }
    },
  };
}
