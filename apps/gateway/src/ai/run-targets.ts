import { type AttemptContext, type FallbackResult, runWithFallback } from './fallback';
import type { Target } from './lanes';
import type { AiRuntime, StoredKeys } from './runtime';

/** One AI request's walk over its targets: which endpoint, where to try, with whose keys. */
export type TargetsCall<T> = {
  /** Label for logs and metrics, e.g. `chat`, `stream`, `image`. */
  endpoint: string;
  targets: readonly Target[];
  storedKeys: StoredKeys;
  clientSignal: AbortSignal;
  attempt: (ctx: AttemptContext) => Promise<T>;
};

/**
 * runWithFallback with the runtime's settings: the caller's stored key before
 * the server's, the per-target timeout, the whole-chain deadline, the circuit
 * breaker, logs and metrics. Every AI endpoint goes through here.
 */
export function runTargets<T>(rt: AiRuntime, call: TargetsCall<T>): Promise<FallbackResult<T>> {
  return runWithFallback({
    endpoint: call.endpoint,
    targets: call.targets,
    resolveCredential: (t) => rt.providers.credential(t.provider, call.storedKeys[t.provider]),
    clientSignal: call.clientSignal,
    timeoutMs: rt.upstreamTimeoutMs,
    deadlineMs: rt.requestDeadlineMs,
    breaker: rt.breaker,
    logger: rt.logger,
    metrics: rt.metrics,
    attempt: call.attempt,
  });
}
