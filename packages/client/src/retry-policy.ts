/** Retry settings of a client; every field has the spec's default. */
export type RetryOptions = {
  /**
   * Waits before the 1st, 2nd, 3rd ... retry of a 504, a network error or a 429
   * without `Retry-After`. Its length is the retry budget of one call: the default
   * `[2000, 4000, 8000]` makes at most 3 retries (4 requests), then reports.
   */
  backoffMs?: readonly number[];
  /**
   * The longest `Retry-After` the client will wait out. A longer one is reported
   * at once as the 429 (with `retryAfterMs`) instead of blocking the caller.
   */
  maxRetryAfterMs?: number;
};

/** The resolved policy; `false` on a client or call disables retries. */
export type RetryPolicy = { backoffMs: readonly number[]; maxRetryAfterMs: number };

export const DEFAULT_BACKOFF_MS: readonly number[] = Object.freeze([2000, 4000, 8000]);
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

export function resolveRetryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { backoffMs: [], maxRetryAfterMs: 0 };
  const backoffMs = options?.backoffMs ?? DEFAULT_BACKOFF_MS;
  for (const ms of backoffMs) {
    if (!Number.isFinite(ms) || ms < 0) throw new TypeError('retry.backoffMs must hold non-negative numbers');
  }
  return { backoffMs, maxRetryAfterMs: options?.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS };
}

/** What happened on one attempt, as far as the policy cares. */
export type AttemptOutcome =
  | { kind: 'network' }
  | { kind: 'response'; status: number; retryAfterMs?: number };

/** Retries made so far in the current call. */
export type RetryState = { retries: number; serverErrorRetries: number };

/**
 * Decides whether to retry and how long to wait first (ms), or `undefined` to
 * report. This is the spec's table:
 *
 * - 401 (and every other 4xx but 429): never retried; the key is dead or the request is wrong.
 * - 429: wait `Retry-After`, then back off: the first retry waits exactly
 *   `Retry-After`, later ones at least the previous backoff step. Without the
 *   header it is plain backoff. Waits beyond `maxRetryAfterMs` are not made.
 * - 504: exponential backoff, `backoffMs[n]` before retry n, until the budget is spent.
 * - other 5xx: one retry (after `backoffMs[0]`, or `Retry-After` if longer).
 * - network error: backoff like 504.
 */
export function planRetry(
  outcome: AttemptOutcome,
  state: RetryState,
  policy: RetryPolicy,
): number | undefined {
  const step = policy.backoffMs[state.retries];
  if (step === undefined) return undefined;
  if (outcome.kind === 'network') return step;
  const { status, retryAfterMs } = outcome;
  if (status === 429) {
    if (retryAfterMs === undefined) return step;
    if (retryAfterMs > policy.maxRetryAfterMs) return undefined;
    const floor = state.retries === 0 ? 0 : (policy.backoffMs[state.retries - 1] ?? 0);
    return Math.max(retryAfterMs, floor);
  }
  if (status === 504) return step;
  if (status >= 500 && status <= 599) {
    if (state.serverErrorRetries > 0) return undefined;
    if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) return undefined;
    return Math.max(step, retryAfterMs ?? 0);
  }
  return undefined;
}

/**
 * Parses `Retry-After`: delay-seconds or an HTTP date (RFC 9110 10.2.3). A date in
 * the past means "now" (0). Anything unparseable is ignored (undefined).
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Only the date form is left; Date.parse would also accept "1.5" or "-1" as dates.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
