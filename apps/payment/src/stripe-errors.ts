import { AppError } from '@platform/errors';
import Stripe from 'stripe';

const SECRET_KEY_PATTERN = /\b(sk|rk|pk)_(test|live)_[A-Za-z0-9*]+/g;

/** Stripe's own messages are safe to show, but a key (even masked) must never reach a client. */
function scrubMessage(message: string): string {
  return message.replace(SECRET_KEY_PATTERN, '[redacted]');
}

export function isStripeError(err: unknown): err is Stripe.errors.StripeError {
  return err instanceof Stripe.errors.StripeError;
}

/** True for Stripe's "No such <object>" answer (error code `resource_missing`). */
export function isResourceMissing(err: unknown): boolean {
  return isStripeError(err) && err.code === 'resource_missing';
}

/**
 * True for Stripe's "No such customer" (the customer was deleted, in the
 * Dashboard or through the API): as a parameter of another call (`param:
 * customer`) or on the customer's own endpoint.
 */
export function isCustomerMissing(err: unknown): boolean {
  return (
    isResourceMissing(err) &&
    ((err as Stripe.errors.StripeError).param === 'customer' ||
      (err as Stripe.errors.StripeError).message.startsWith('No such customer'))
  );
}

/**
 * Maps a Stripe SDK error to the error our client sees:
 * - invalid request -> 400 with Stripe's message (it names the bad parameter)
 * - idempotency error (key reused with other parameters) -> 409
 * - card error -> 502 (hosted checkout handles cards; one here is an upstream problem)
 * - rate limit -> 503 with Retry-After, since retrying later helps
 * - connection, API, authentication and permission errors -> 502: our upstream
 *   or our configuration failed, and the client can do nothing about it, so the
 *   message stays generic (the original is logged as the cause).
 * Anything that is not a Stripe error is returned unchanged.
 */
export function mapStripeError(err: unknown): unknown {
  if (!isStripeError(err)) return err;
  switch (err.type) {
    case 'StripeInvalidRequestError':
      return new AppError('stripe_invalid_request', { message: scrubMessage(err.message), cause: err });
    case 'StripeIdempotencyError':
      return new AppError('idempotency_conflict', { cause: err });
    case 'StripeCardError':
      return new AppError('stripe_card_error', { message: scrubMessage(err.message), cause: err });
    case 'StripeRateLimitError':
      return new AppError('stripe_rate_limited', { cause: err, headers: { 'Retry-After': '1' } });
    default:
      return new AppError('stripe_unavailable', { cause: err });
  }
}

/** Runs a Stripe call and rethrows its failure as the AppError a client may see. */
export async function callStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw mapStripeError(err);
  }
}
