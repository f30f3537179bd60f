import { Counter, Histogram, type Registry } from '@platform/logging';
import type { AttemptOutcome } from './upstream-errors';

/** Upstream metrics of the AI endpoints, registered on the app's /metrics registry. */
export type AiMetrics = {
  attempt(provider: string, outcome: AttemptOutcome, seconds: number): void;
  /** A failed target handed the request on to the next one. */
  fallback(endpoint: string, fromProvider: string): void;
};

export function createAiMetrics(registry: Registry): AiMetrics {
  const attempts = new Counter({
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
  const fallbacks = new Counter({
    name: 'ai_upstream_fallbacks_total',
    help: 'Requests handed on to the next target after a failure, by endpoint and failed provider',
    labelNames: ['endpoint', 'from_provider'] as const,
    registers: [registry],
  });
  return {
    attempt(provider, outcome, seconds) {
      attempts.inc({ provider, outcome });
      duration.observe({ provider, outcome }, seconds);
    },
    fallback(endpoint, fromProvider) {
      fallbacks.inc({ endpoint, from_provider: fromProvider });
    },
  };
}
