import { Counter, Histogram, type Registry } from '@platform/logging';
import { batchedCounter } from '../observability/batched-counter';
import { createTargetMetrics, type TargetMetrics } from '../observability/metrics';
import type { AttemptOutcome } from './providers/upstream-errors';

/**
 * Upstream metrics of the AI endpoints, registered on the app's /metrics
 * registry; the per-target and per-model ones are observability/metrics.ts'.
 */
export type AiMetrics = TargetMetrics & {
  attempt(provider: string, outcome: AttemptOutcome, seconds: number): void;
  /** A failed target handed the request on to the next one. */
  fallback(endpoint: string, fromProvider: string): void;
  /** A failed attempt tried again on the same target (429 with a short Retry-After, 5xx, reset). */
  retry(endpoint: string, provider: string, outcome: AttemptOutcome): void;
  /** A stream cut, stalled or garbled after its first content went on at another target, by prefill or instruction. */
  continuation(fromProvider: string, reason: string, mode: 'prefill' | 'instruction'): void;
  /**
   * A stream ended, as it really did: `completed`, `continued`, `error` (an
   * in-band error event after the 200, `error` its code) or `aborted`.
   */
  streamEnded(lane: string, ending: string, error: string): void;
  /** An unparseable stream event (skipped when alone). */
  garbledEvent(provider: string): void;
};

export function createAiMetrics(registry: Registry): AiMetrics {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  // Counted on every request: batched (observability/batched-counter.ts).
  const attempts = batchedCounter({
    name: 'ai_upstream_attempts_total',
    help: 'Upstream AI provider attempts by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ai_upstream_attempt_duration_seconds',
    help: 'Time until an upstream AI provider started answering or failed, by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const fallbacks = counter(
    'ai_upstream_fallbacks_total',
    'Requests handed on to the next target after a failure, by endpoint and failed provider',
    ['endpoint', 'from_provider'],
  );
  const retries = counter(
    'ai_upstream_retries_total',
    'Attempts tried again on the same target before failing over, by endpoint, provider and the outcome retried',
    ['endpoint', 'provider', 'outcome'],
  );
  const continuations = counter(
    'ai_stream_continuations_total',
    'Streams continued on another target after a cut, stall or garbled events mid-answer, by failed provider, reason and mode (prefill or instruction)',
    ['from_provider', 'reason', 'mode'],
  );
  // Counted on every stream: batched like the attempts.
  const endings = batchedCounter({
    name: 'ai_stream_endings_total',
    help: 'Streams by how they really ended (completed, continued, error, aborted), by lane and in-band error code',
    labelNames: ['lane', 'ending', 'error'] as const,
    registers: [registry],
  });
  const garbled = counter(
    'ai_stream_garbled_events_total',
    'Unparseable server-sent events received from a provider, by provider',
    ['provider'],
  );
  return {
    ...createTargetMetrics(registry),
    retry(endpoint, provider, outcome) {
      retries.inc({ endpoint, provider, outcome });
    },
    continuation(fromProvider, reason, mode) {
      continuations.inc({ from_provider: fromProvider, reason, mode });
    },
    streamEnded(lane, ending, error) {
      endings.add(1, () => ({ lane, ending, error }), lane, ending, error);
    },
    garbledEvent(provider) {
      garbled.inc({ provider });
    },
    attempt(provider, outcome, seconds) {
      attempts.add(1, () => ({ provider, outcome }), provider, outcome);
      duration.observe({ provider, outcome }, seconds);
    },
    fallback(endpoint, fromProvider) {
      fallbacks.inc({ endpoint, from_provider: fromProvider });
    },
  };
}
