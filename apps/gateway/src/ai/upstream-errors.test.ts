import OpenAI from 'openai';
import {
  classifyUpstreamError,
  isRetryable,
  retryAfterSeconds,
  toFinalError,
  UpstreamHttpError,
} from './upstream-errors';

const none = { timedOut: false, clientGone: false };

function apiError(status: number, headers: Record<string, string> = {}) {
  return OpenAI.APIError.generate(status, { error: { message: 'x' } }, 'x', new Headers(headers));
}

describe('upstream error classification', () => {
  it.each([
    [503, 'server_error', true],
    [500, 'server_error', true],
    [429, 'rate_limited', true],
    [401, 'provider_refused', true],
    [404, 'provider_refused', true],
    [400, 'request_rejected', false],
    [422, 'request_rejected', false],
  ])('status %i is %s (retryable: %s)', (status, outcome, retryable) => {
    const result = classifyUpstreamError(apiError(status), none);
    expect(result.outcome).toBe(outcome);
    expect(isRetryable(result.outcome)).toBe(retryable);
  });

  it('our timeout wins over the abort error it caused', () => {
    const result = classifyUpstreamError(new OpenAI.APIUserAbortError(), {
      timedOut: true,
      clientGone: false,
    });
    expect(result.outcome).toBe('timeout');
  });

  it('a client that went away is not retried', () => {
    const result = classifyUpstreamError(new OpenAI.APIUserAbortError(), {
      timedOut: false,
      clientGone: true,
    });
    expect(result.outcome).toBe('aborted');
    expect(isRetryable(result.outcome)).toBe(false);
  });

  it('connection errors are retried', () => {
    const result = classifyUpstreamError(new OpenAI.APIConnectionError({ message: 'boom' }), none);
    expect(result.outcome).toBe('connection_error');
  });

  it('keeps the Retry-After of a 429', () => {
    expect(classifyUpstreamError(apiError(429, { 'retry-after': '7' }), none).retryAfter).toBe('7');
    expect(classifyUpstreamError(new UpstreamHttpError(429, '3'), none)).toMatchObject({
      outcome: 'rate_limited',
      retryAfter: '3',
    });
  });

  it('rethrows errors that are not upstream failures', () => {
    expect(() => classifyUpstreamError(new RangeError('bug'), none)).toThrow(RangeError);
  });
});

describe('final error', () => {
  it('maps the last outcome to the status the caller sees', () => {
    expect(toFinalError({ outcome: 'timeout', retryAfter: null }).status).toBe(504);
    expect(toFinalError({ outcome: 'server_error', retryAfter: null }).status).toBe(502);
    expect(toFinalError({ outcome: 'request_rejected', retryAfter: null }).status).toBe(400);
    expect(toFinalError(undefined).status).toBe(503);
    const limited = toFinalError({ outcome: 'rate_limited', retryAfter: '12' });
    expect(limited.status).toBe(429);
    expect(limited.headers).toEqual({ 'Retry-After': '12' });
  });

  it('reads Retry-After as seconds or as a date, with a default', () => {
    expect(retryAfterSeconds('2.5')).toBe(3);
    expect(retryAfterSeconds(new Date(10_000).toUTCString(), 0)).toBe(10);
    expect(retryAfterSeconds(null)).toBe(30);
  });
});
