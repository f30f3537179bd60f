import type { LanesConfig, RetryConfig, Target } from './config/lanes';
import { type AttemptContext, type FallbackResult, type RetryPolicy, runWithFallback } from './fallback';
import { noteFailedAttempt } from './request-attempts';
import type { AiRuntime, StoredKeys } from './runtime';

/** One AI request's walk over its targets: which endpoint, where to try, with whose keys. */
export type TargetsCall<T> = {
  /** Label for logs and metrics, e.g. `chat`, `stream`, `image`. */
  endpoint: string;
  targets: readonly Target[];
  storedKeys: StoredKeys;
  clientSignal: AbortSignal;
  /** The lane whose limits apply (retry, first token); media kinds have none. */
  lane?: string;
  /** A stream: the lane's `first_token_timeout_ms` applies to each attempt. */
  stream?: boolean;
  attempt: (ctx: AttemptContext) => Promise<T>;
};

/** The retry settings of a lane (its own, else the config-wide ones). */
export function retryPolicyOf(config: LanesConfig, lane: string | undefined): RetryPolicy {
  const retry: RetryConfig = (lane !== undefined ? config.lanes[lane]?.retry : undefined) ?? config.retry;
  return {
    maxRetries: retry.max_retries,
    backoffMs: retry.backoff_ms,
    retryAfterMaxMs: retry.retry_after_max_ms,
  };
}

/**
 * runWithFallback with the runtime's settings: the caller's stored key before
 * the server's, the per-target timeout (and the lane's first-token limit for
 * streams), the whole-chain deadline, the lane's retries, the circuit
 * breaker, logs and metrics. Every AI endpoint goes through here.
 */
export function runTargets<T>(rt: AiRuntime, call: TargetsCall<T>): Promise<FallbackResult<T>> {
  const lane = call.lane !== undefined ? rt.config.lanes[call.lane] : undefined;
  return runWithFallback({
    endpoint: call.endpoint,
    targets: call.targets,
    resolveCredential: (t) => rt.providers.credential(t.provider, call.storedKeys[t.provider]),
    clientSignal: call.clientSignal,
    timeoutMs: rt.upstreamTimeoutMs,
    firstTokenTimeoutMs: call.stream ? lane?.first_token_timeout_ms : undefined,
    deadlineMs: rt.requestDeadlineMs,
    retry: retryPolicyOf(rt.config, call.lane),
    breaker: rt.breaker,
    clock: rt.clock,
    logger: rt.logger,
    metrics: rt.metrics,
    attempt: call.attempt,
    onFailedAttempt: noteFailedAttempt,
  });
}
