import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { inSpan, type TraceSpan } from '@platform/service-kit';
import { endAttemptSpan, startAttemptSpan, targetSkipped } from '../observability/spans';
import type { CircuitBreaker } from './circuit-breaker';
import type { Target } from './config/lanes';
import type { AiMetrics } from './metrics';
import type { ProviderCredential } from './providers/registry';
import {
  type AttemptFailure,
  type AttemptOutcome,
  classifyUpstreamError,
  isRetryable,
  retryAfterMs,
  toFinalError,
} from './providers/upstream-errors';
import { noteAttempt } from './request-attempts';

/** The caller went away; nothing more is sent and the upstream request is cancelled. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientGoneError';
  }
}

/** What one attempt gets: the target, its credential and a signal that fires on timeout or disconnect. */
export type AttemptContext = { target: Target; credential: ProviderCredential; signal: AbortSignal };

/**
 * Retries on the same target before failing over (lanes config `retry`).
 * Only failures where nothing reached the caller and the target itself may
 * answer the next time are retried: a 429 whose Retry-After fits, a 5xx, a
 * connection reset. Never a timeout, another 4xx, a refused connection.
 */
export type RetryPolicy = {
  /** Retries per target and request (0 turns retrying off). */
  maxRetries: number;
  /** Base wait before retrying a 5xx or a reset; the actual wait is 50-100 % of it (jitter). */
  backoffMs: number;
  /** Longest Retry-After honoured; a longer one (or none) fails over at once. */
  retryAfterMaxMs: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 1, backoffMs: 200, retryAfterMaxMs: 5_000 };

/** How long to wait before retrying this failure on the same target, or null to fail over now. */
export function retryDelayMs(
  failure: AttemptFailure,
  policy: RetryPolicy,
  now: number,
  random = Math.random,
): number | null {
  if (failure.outcome === 'rate_limited') {
    const wait = retryAfterMs(failure.retryAfter, now);
    return wait !== null && wait <= policy.retryAfterMaxMs ? wait : null;
  }
  const fiveXx = failure.outcome === 'server_error' && failure.status !== undefined && failure.status >= 500;
  const reset = failure.outcome === 'connection_error' && failure.reset === true;
  if (fiveXx || reset) return Math.round(policy.backoffMs * (0.5 + random() / 2));
  return null;
}

/** Resolves after `ms`, or at once when `signal` fires. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

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
   * The lane's `first_token_timeout_ms`: a shorter limit until `attempt`
   * resolves (streams resolve at the first content). A target that misses it
   * counts as timed out, and the next one is tried.
   */
  firstTokenTimeoutMs?: number;
  /** Same-target retries; none when unset. */
  retry?: RetryPolicy;

  /**
   * Time allowed for the whole chain (AI_REQUEST_DEADLINE_MS): no attempt runs
   * past it, and when it passes the caller gets 504. Unset: only `timeoutMs`.
   */
  deadlineMs?: number;
  /** Skips targets cooling down after a failure, and learns from every attempt. */
  breaker?: CircuitBreaker;
  /** Deadlines, latencies, Retry-After dates. */
  clock: Clock;
  logger: Logger;
  metrics: AiMetrics;
  /** Calls the provider; resolves as soon as it started answering. */
  attempt: (ctx: AttemptContext) => Promise<T>;
  /** Told of every failed attempt (the route frame keeps those the provider may bill). */
  onFailedAttempt?: (failed: {
    target: Target;
    byok: boolean;
    outcome: AttemptOutcome;
    status: number | null;
    latencyMs: number;
  }) => void;
};

export type FallbackResult<T> = {
  value: T;
  target: Target;
  credential: ProviderCredential;
  /** Aborts the answering request later (idle timeout); also fires on client disconnect. */
  controller: AbortController;
  /** Milliseconds from the first attempt until the provider started answering. */
  latencyMs: number;
  /** Attempts made, this one included (skipped targets without a key do not count; retries do). */
  attempts: number;
  /** Index in `targets` of the target that answered. */
  index: number;
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
 * Tries the targets in order until one starts answering. A 429 whose
 * Retry-After fits, a 5xx or a reset is first retried on the same target
 * (`retry`); then a timeout, a connection error of any kind (DNS, TLS,
 * refused, reset), a 429, a 5xx or a context-length 400 moves on to the next
 * target; a 4xx caused by the request itself (content policy included) ends
 * the chain, since every provider would refuse it.
 * Every attempt is counted in the metrics; a failed one is logged (warn) with
 * provider, status and latency. A successful one is logged at debug only: the
 * route puts provider, model and attempts on the request's access-log line,
 * so a successful request costs one log line.
 *
 * Over 80 lines: one loop over the targets with the retry loop inside; both update the chain's state (last failure, deadline, attempts, targets cooling down), which helpers would have to pass back and forth.
 */
export async function runWithFallback<T>(opts: FallbackOptions<T>): Promise<FallbackResult<T>> {
  const started = opts.clock();
  const deadlineAt = opts.deadlineMs === undefined ? Number.POSITIVE_INFINITY : started + opts.deadlineMs;
  let last: AttemptFailure | undefined;
  let lastTarget: Target | undefined;
  const coolingDown: Array<{ credential: ProviderCredential; model: string }> = [];
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
      targetSkipped(target, 'no_key');
      continue;
    }
    if (opts.breaker?.isOpen(credential, target.model)) {
      coolingDown.push({ credential, model: target.model });
      opts.logger.debug({ provider: target.provider, model: target.model }, 'upstream skipped: cooling down');
      targetSkipped(target, 'breaker_open');
      continue;
    }
    if (last) opts.metrics.fallback(opts.endpoint, lastTarget?.provider ?? 'none');
    let failure: AttemptFailure | undefined;
    let cutByDeadline = false;
    // The first try plus at most maxRetries more on this target; the breaker learns the verdict after them.
    for (let retry = 0; ; retry++) {
      const remainingMs = deadlineAt - opts.clock();
      if (remainingMs <= 0) {
        failure = undefined;
        break;
      }
      const limitMs = Math.min(opts.timeoutMs, opts.firstTokenTimeoutMs ?? Number.POSITIVE_INFINITY);
      // An attempt cut short by the request deadline says nothing about the target's health.
      const attemptTimeoutMs = Math.min(limitMs, remainingMs);
      cutByDeadline = attemptTimeoutMs < limitMs;
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, attemptTimeoutMs);
      const onClientGone = () => controller.abort();
      opts.clientSignal.addEventListener('abort', onClientGone, { once: true });
      const attemptStart = opts.clock();
      attempts += 1;
      const span = startAttemptSpan({
        endpoint: opts.endpoint,
        target,
        credential,
        position: index + 1,
        retry,
        attempt: attempts,
        breakerState: 'closed',
      });
      try {
        // The attempt's span is active inside: the provider call carries it on as `traceparent`.
        // Tracing off (no span): called directly, no closure or context for it.
        const value = await (span
          ? inSpan(span, () => opts.attempt({ target, credential, signal: controller.signal }))
          : opts.attempt({ target, credential, signal: controller.signal }));
        clearTimeout(timer);
        const latencyMs = opts.clock() - attemptStart;
        logAttempt(
          opts,
          index,
          target,
          credential,
          { outcome: 'success', status: 200 },
          latencyMs,
          retry,
          span,
        );
        opts.breaker?.record(credential, target.model, 'success');
        return { value, target, credential, controller, latencyMs: opts.clock() - started, attempts, index };
      } catch (err) {
        clearTimeout(timer);
        opts.clientSignal.removeEventListener('abort', onClientGone);
        const latencyMs = opts.clock() - attemptStart;
        failure = classifyUpstreamError(err, { timedOut, clientGone: opts.clientSignal.aborted });
        logAttempt(opts, index, target, credential, failure, latencyMs, retry, span);
        if (failure.outcome === 'aborted') throw new ClientGoneError();
        opts.onFailedAttempt?.({
          target,
          byok: credential.byok,
          outcome: failure.outcome,
          status: failure.status ?? null,
          latencyMs,
        });
      }
      if (!opts.retry || retry >= opts.retry.maxRetries) break;
      const delay = retryDelayMs(failure, opts.retry, opts.clock());
      // A retry must leave the attempt some time before the deadline, or it only delays the answer.
      if (delay === null || opts.clock() + delay >= deadlineAt - 50) break;
      opts.metrics.retry(opts.endpoint, target.provider, failure.outcome);
      await sleep(delay, opts.clientSignal);
      if (opts.clientSignal.aborted) throw new ClientGoneError();
    }
    if (!failure) {
      // The request deadline passed while earlier targets failed: the spec's 504.
      last = { outcome: 'timeout', status: undefined, retryAfter: null };
      break;
    }
    if (!(failure.outcome === 'timeout' && cutByDeadline))
      opts.breaker?.record(credential, target.model, failure.outcome);
    last = failure;
    lastTarget = target;
    if (!isRetryable(failure.outcome)) break;
  }
  if (!last && coolingDown.length > 0 && opts.breaker) {
    // Every target with a key is cooling down: answer at once rather than wait for a dead one.
    const seconds = Math.max(1, Math.ceil(opts.breaker.retryAfterMs(coolingDown) / 1000));
    throw new FallbackExhaustedError(
      new AppError('upstream_unavailable', { headers: { 'Retry-After': String(seconds) } }),
      undefined,
    );
  }
  throw new FallbackExhaustedError(toFinalError(last, opts.clock()), lastTarget);
}

function logAttempt<T>(
  opts: FallbackOptions<T>,
  index: number,
  target: Target,
  credential: ProviderCredential,
  result: { outcome: AttemptOutcome; status: number | undefined; reason?: string | null },
  latencyMs: number,
  retry: number,
  span: TraceSpan,
): void {
  opts.metrics.attempt(target.provider, result.outcome, latencyMs / 1000);
  opts.metrics.targetAttempt(opts.endpoint, target.provider, target.model, result.outcome, latencyMs / 1000);
  endAttemptSpan(span, result, latencyMs);
  noteAttempt({
    target,
    outcome: result.outcome,
    status: result.status,
    retry,
    startedAt: opts.clock() - latencyMs,
    durationMs: latencyMs,
  });
  // A success is logged at debug only: nothing is built for it while debug is off (the usual case).
  const success = result.outcome === 'success';
  if (success && !opts.logger.isLevelEnabled('debug')) return;
  const fields = {
    endpoint: opts.endpoint,
    attempt: index + 1,
    provider: target.provider,
    model: target.model,
    byok: credential.byok,
    outcome: result.outcome,
    status: result.status ?? null,
    latency_ms: latencyMs,
    retry,
    // The provider's reason code only (a checked identifier), never its message.
    ...(result.reason ? { reason: result.reason } : {}),
  };
  if (success) opts.logger.debug(fields, 'upstream attempt');
  else opts.logger.warn(fields, 'upstream attempt failed');
}
