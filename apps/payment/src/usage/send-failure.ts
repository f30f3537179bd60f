import { AppError } from '@platform/errors';
import { isStripeError } from '../stripe-errors';
import type { SendFailureKind } from './metrics';

/** How the sender treats a failed call: retry later (after at least `retryAfterMs`) or give the row up. */
export type SendFailure = {
  kind: SendFailureKind;
  retry: boolean;
  /** Stripe's Retry-After, in ms, when it sent one. */
  retryAfterMs?: number;
  message: string;
  /** Stripe already holds an event with this identifier (within its 24 h window): the row counts as sent. */
  delivered?: boolean;
};

function retryAfterMs(headers: Record<string, unknown> | undefined): number | undefined {
  const raw = headers?.['retry-after'];
  const seconds = typeof raw === 'string' ? Number(raw) : Number.NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 3600) * 1000 : undefined;
}

/**
 * Sorts a meter event failure. Only a 400/404 about the request itself
 * (invalid_request_error: unknown event name, timestamp out of range, ...) or
 * a reused idempotency key is given up on: the row becomes `failed`. Rate
 * limits, Stripe's 5xx, network errors, and authentication or permission
 * errors (our configuration, not the event) are retried.
 */
export function classifySendFailure(err: unknown): SendFailure {
  if (!isStripeError(err)) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: err instanceof AppError ? 'customer' : 'connection', retry: true, message };
  }
  const message = `${err.type}: ${err.message}`;
  const status = err.statusCode ?? 0;
  if (err.type === 'StripeRateLimitError' || status === 429)
    return { kind: 'rate_limited', retry: true, retryAfterMs: retryAfterMs(err.headers), message };
  if (err.type === 'StripeConnectionError') return { kind: 'connection', retry: true, message };
  if (
    err.type === 'StripeInvalidRequestError' &&
    err.code === 'resource_already_exists' &&
    err.param === 'identifier'
  )
    return { kind: 'refused', retry: false, delivered: true, message };
  if (err.type === 'StripeIdempotencyError') return { kind: 'refused', retry: false, message };
  if (err.type === 'StripeInvalidRequestError' && (status === 400 || status === 404))
    return { kind: 'refused', retry: false, message };
  return { kind: 'server_error', retry: true, retryAfterMs: retryAfterMs(err.headers), message };
}

/** Exponential backoff with full jitter, never shorter than Stripe's Retry-After. */
export function retryDelayMs(
  attempts: number,
  failure: SendFailure,
  opts: { baseMs: number; maxMs: number; random?: () => number },
): number {
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(attempts, 20));
  const jittered = ceiling / 2 + ((opts.random ?? Math.random)() * ceiling) / 2;
  return Math.max(Math.round(jittered), failure.retryAfterMs ?? 0);
}
