import Stripe from 'stripe';
import { classifySendFailure, retryDelayMs } from './send-failure';

const stripeError = (raw: Record<string, unknown>) => Stripe.errors.StripeError.generate(raw as never);

describe('classifySendFailure', () => {
  test('429 is retried after at least its Retry-After', () => {
    const failure = classifySendFailure(
      stripeError({
        type: 'rate_limit_error',
        statusCode: 429,
        message: 'slow down',
        headers: { 'retry-after': '7' },
      }),
    );
    expect(failure).toMatchObject({ kind: 'rate_limited', retry: true, retryAfterMs: 7000 });
    expect(retryDelayMs(0, failure, { baseMs: 100, maxMs: 1000, random: () => 0 })).toBe(7000);
  });

  test('5xx, network and authentication failures are retried; a 400 about the event is not', () => {
    expect(classifySendFailure(stripeError({ type: 'api_error', statusCode: 500 }))).toMatchObject({
      kind: 'server_error',
      retry: true,
    });
    expect(classifySendFailure(new Stripe.errors.StripeConnectionError({ message: 'reset' }))).toMatchObject({
      kind: 'connection',
      retry: true,
    });
    expect(classifySendFailure(stripeError({ type: 'authentication_error', statusCode: 401 })).retry).toBe(
      true,
    );
    expect(
      classifySendFailure(
        stripeError({ type: 'invalid_request_error', statusCode: 400, message: 'No active meter' }),
      ),
    ).toMatchObject({ kind: 'refused', retry: false });
  });

  test('an identifier Stripe already holds counts as delivered', () => {
    const failure = classifySendFailure(
      stripeError({
        type: 'invalid_request_error',
        statusCode: 400,
        code: 'resource_already_exists',
        param: 'identifier',
      }),
    );
    expect(failure.delivered).toBe(true);
  });
});

describe('retryDelayMs', () => {
  test('doubles per attempt with jitter between half and all of the ceiling, capped', () => {
    const failure = { kind: 'server_error' as const, retry: true, message: '' };
    const opts = { baseMs: 100, maxMs: 1000 };
    expect(retryDelayMs(0, failure, { ...opts, random: () => 0 })).toBe(50);
    expect(retryDelayMs(0, failure, { ...opts, random: () => 1 })).toBe(100);
    expect(retryDelayMs(3, failure, { ...opts, random: () => 1 })).toBe(800);
    expect(retryDelayMs(30, failure, { ...opts, random: () => 1 })).toBe(1000);
  });
});
