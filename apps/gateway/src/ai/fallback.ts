import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { CircuitBreaker } from './circuit-breaker';
import type { Target } from './lanes';
import type { AiMetrics } from './metrics';
import type { ProviderCredential } from './providers';
import { type AttemptOutcome, classifyUpstreamError, isRetryable, toFinalError } from './upstream-errors';

/** The caller went away; nothing more is sent and the upstream request is cancelled. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientGoneError';
  }
}

/** What one attempt gets: the target, its credential and a signal that fires on timeout or disconnect. */
export type AttemptContext = { target: Target; credential: ProviderCredential; signal: AbortSignal };

export type FallbackOptions<T> = {
  /** Label for logs and metrics, e.g. `chat`, `stream`, `image`. */
  endpoint: string;
  targets: readonly Target[];
  /** The credential for a target, or null to skip it (no key configured). */
  resolveCredential: (target: Target) => ProviderCredential | null;
  /** Fires when the client disconnects. */
  clientSignal: AbortSignal;
  /** Time allowed until `attempt` resolves, i.e. until the provider starts answering. */
  timeoutMs: number;
  /**
   * Time allowed for the whole chain (AI_REQUEST_DEADLINE_MS): no attempt runs
   * past it, and when it passes the caller gets 504. Unset: only `timeoutMs`.
   */
  deadlineMs?: number;
  /** Skips targets cooling down after a failure, and learns from every attempt. */
  breaker?: CircuitBreaker;
  logger: Logger;
  metrics: AiMetrics;
  /** Calls the provider; resolves as soon as it started answering. */
  attempt: (ctx: AttemptContext) => Promise<T>;
};

export type FallbackResult<T> = {
  value: T;
  target: Target;
  credential: ProviderCredential;
  /** Aborts the answering request later (idle timeout); also fires on client disconnect. */
  controller: AbortController;
  /** Milliseconds from the first attempt until the provider started answering. */
  latencyMs: number;
  /** Attempts made, this one included (skipped targets without a key do not count). */
  attempts: number;
};

/** Thrown when no target answered; `error` is what the caller sees, `last*` feed usage records. */
export class FallbackExhaustedError extends Error {
  constructor(
    readonly error: ReturnType<typeof toFinalError>,
    readonly lastTarget: Target | undefined,
  ) {
    super(error.message);
    this.name = 'FallbackExhaustedError';
  }
}

/**
 * Tries the targets in order until one starts answering. A timeout, a
 * connection error, a 429 or a 5xx moves on to the next target; a 4xx caused
 * by the request itself ends the chain, since every provider would refuse it.
 * Every attempt is counted in the metrics; a failed one is logged (warn) with
 * provider, status and latency. A successful one is logged at debug only: the
 * route puts provider, model and attempts on the request's access-log line,
 * so a successful request costs one log line.
 */
export async function runWithFallback<T>(opts: FallbackOptions<T>): Promise<FallbackResult<T>> {
  const started = Date.now();
  const deadlineAt = opts.deadlineMs === undefined ? Number.POSITIVE_INFINITY : started + opts.deadlineMs;
  let last: { outcome: AttemptOutcome; retryAfter: string | null } | undefined;
  let lastTarget: Target | undefined;
  const coolingDown: ProviderCredential[] = [];
  let attempts = 0;
  for (const [index, target] of opts.targets.entries()) {
    if (opts.clientSignal.aborted) throw new ClientGoneError();
    const credential = opts.resolveCredential(target);
    if (!credential) {
      // Debug only: missing server keys are reported once at start (createAiRuntime).
      opts.logger.debug(
        { provider: target.provider, model: target.model },
        'upstream skipped: no key configured',
      );
      continue;
    }
    if (opts.breaker?.isOpen(credential)) {
      coolingDown.push(credential);
      opts.logger.debug({ provider: target.provider, model: target.model }, 'upstream skipped: cooling down');
      continue;
    }
    const remainingMs = deadlineAt - Date.now();
    if (remainingMs <= 0) {
      // The request deadline passed while earlier targets failed: the spec's 504.
      last = { outcome: 'timeout', retryAfter: null };
      break;
    }
    // An attempt cut short by the request deadline says nothing about the target's health.
    const attemptTimeoutMs = Math.min(opts.timeoutMs, remainingMs);
    const cutByDeadline = attemptTimeoutMs < opts.timeoutMs;
    if (last) opts.metrics.fallback(opts.endpoint, lastTarget?.provider ?? 'none');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, attemptTimeoutMs);
    const onClientGone = () => controller.abort();
    opts.clientSignal.addEventListener('abort', onClientGone, { once: true });
    const attemptStart = Date.now();
    attempts += 1;
    try {
      const value = await opts.attempt({ target, credential, signal: controller.signal });
      clearTimeout(timer);
      const latencyMs = Date.now() - attemptStart;
      logAttempt(opts, index, target, credential, { outcome: 'success', status: 200 }, latencyMs);
      opts.breaker?.record(credential, 'success');
      return { value, target, credential, controller, latencyMs: Date.now() - started, attempts };
    } catch (err) {
      clearTimeout(timer);
      opts.clientSignal.removeEventListener('abort', onClientGone);
      const latencyMs = Date.now() - attemptStart;
      const failure = classifyUpstreamError(err, { timedOut, clientGone: opts.clientSignal.aborted });
      logAttempt(opts, index, target, credential, failure, latencyMs);
      if (failure.outcome === 'aborted') throw new ClientGoneError();
      if (!(failure.outcome === 'timeout' && cutByDeadline))
        opts.breaker?.record(credential, failure.outcome);
      last = failure;
      lastTarget = target;
      if (!isRetryable(failure.outcome)) break;
    }
  }
  if (!last && coolingDown.length > 0 && opts.breaker) {
    // Every target with a key is cooling down: answer at once rather than wait for a dead one.
    const seconds = Math.max(1, Math.ceil(opts.breaker.retryAfterMs(coolingDown) / 1000));
    throw new FallbackExhaustedError(
      new AppError('upstream_unavailable', { headers: { 'Retry-After': String(seconds) } }),
      undefined,
    );
  }
  throw new FallbackExhaustedError(toFinalError(last), lastTarget);
}

function logAttempt<T>(
  opts: FallbackOptions<T>,
  index: number,
  target: Target,
  credential: ProviderCredential,
  result: { outcome: AttemptOutcome; status: number | undefined },
  latencyMs: number,
): void {
  opts.metrics.attempt(target.provider, result.outcome, latencyMs / 1000);
  const fields = {
    endpoint: opts.endpoint,
    attempt: index + 1,
    provider: target.provider,
    model: target.model,
    byok: credential.byok,
    outcome: result.outcome,
    status: result.status ?? null,
    latency_ms: latencyMs,
  };
  if (result.outcome === 'success') opts.logger.debug(fields, 'upstream attempt');
  else opts.logger.warn(fields, 'upstream attempt failed');
}
