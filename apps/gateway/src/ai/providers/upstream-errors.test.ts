import { DEFAULT_RETRY_POLICY, retryDelayMs } from '../fallback';
import { openAiSdk } from './openai-sdk';
import {
  classifyUpstreamError,
  isNetworkErrorCode,
  isRetryable,
  readProviderError,
  retryAfterSeconds,
  toFinalError,
  UpstreamHttpError,
} from './upstream-errors';

// Loaded as a media or embeddings client loads it: from then on its errors are known.
const OpenAI = openAiSdk();

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

  it.each([
    ['EAI_AGAIN', false],
    ['ENOTFOUND', false],
    ['EAI_NONAME', false],
    ['ECONNREFUSED', false],
    ['ECONNRESET', true],
    ['UND_ERR_SOCKET', true],
    ['UND_ERR_CONNECT_TIMEOUT', false],
    ['ERR_TLS_CERT_ALTNAME_INVALID', false],
    ['ERR_SSL_WRONG_VERSION_NUMBER', false],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', false],
    ['CERT_HAS_EXPIRED', false],
  ])('network code %s is a connection error of the provider (reset: %s)', (code, reset) => {
    const err = Object.assign(new Error('x'), { code });
    const result = classifyUpstreamError(err, none);
    expect(result.outcome).toBe('connection_error');
    expect(result.reset === true).toBe(reset);
    expect(isRetryable(result.outcome)).toBe(true);
    // fetch wraps the same error in a TypeError's cause; a dual-stack connect in an AggregateError.
    expect(classifyUpstreamError(new TypeError('fetch failed', { cause: err }), none).outcome).toBe(
      'connection_error',
    );
    expect(classifyUpstreamError(new AggregateError([err], 'x'), none).outcome).toBe('connection_error');
  });

  it('only network-shaped codes count as network errors', () => {
    expect(isNetworkErrorCode('EAI_AGAIN')).toBe(true);
    expect(isNetworkErrorCode('P1001')).toBe(false);
    expect(isNetworkErrorCode('Econnreset')).toBe(false);
    expect(isNetworkErrorCode('E')).toBe(false);
  });

  it('reads context-length and content-policy 400s from the body; other 4xx stay as they were', () => {
    const ctx = readProviderError(
      JSON.stringify({
        error: { message: 'x', type: 'invalid_request_error', code: 'context_length_exceeded' },
      }),
    );
    expect(ctx).toEqual({ kind: 'context_length', reason: 'context_length_exceeded' });
    expect(
      readProviderError(
        JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens" } }),
      ).kind,
    ).toBe('context_length');
    const policy = readProviderError(
      JSON.stringify({ error: { message: 'Your request was rejected', code: 'content_policy_violation' } }),
    );
    expect(policy).toEqual({ kind: 'content_policy', reason: 'content_policy_violation' });
    // A reason that is not a plain identifier is not passed on.
    const odd = readProviderError(JSON.stringify({ error: { message: 'flagged', code: 'sk-abc <script>' } }));
    expect(odd).toEqual({ kind: 'content_policy', reason: 'content_policy' });
    expect(readProviderError('not json').kind).toBe('other');
    expect(readProviderError(JSON.stringify({ error: { message: 'bad', code: 'invalid_value' } }))).toEqual({
      kind: 'other',
      reason: 'invalid_value',
    });

    const over = classifyUpstreamError(new UpstreamHttpError(400, null, ctx), none);
    expect(over.outcome).toBe('context_exceeded');
    expect(isRetryable(over.outcome)).toBe(true);
    const refused = classifyUpstreamError(new UpstreamHttpError(400, null, policy), none);
    expect(refused).toMatchObject({ outcome: 'content_refused', reason: 'content_policy_violation' });
    expect(isRetryable(refused.outcome)).toBe(false);
    const final = toFinalError(refused, 0);
    expect(final.status).toBe(400);
    expect(final.details).toEqual([{ path: 'provider_reason', message: 'content_policy_violation' }]);
    expect(toFinalError(over, 0).code).toBe('upstream_context_length');
  });

  it("reads a refused prefill (a code, or Anthropic's wording) as its own outcome, tried elsewhere", () => {
    const anthropic = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'This model does not support assistant message prefill. The conversation must end with a user message.',
      },
    });
    expect(readProviderError(anthropic)).toEqual({ kind: 'prefill', reason: 'prefill_rejected' });
    const coded = JSON.stringify({ error: { message: 'no', code: 'prefill_rejected' } });
    expect(readProviderError(coded)).toEqual({ kind: 'prefill', reason: 'prefill_rejected' });
    // A trailing-whitespace complaint about a prefill is not a refusal of prefill.
    const whitespace = JSON.stringify({
      error: { message: 'final assistant content cannot end with trailing whitespace' },
    });
    expect(readProviderError(whitespace).kind).toBe('other');
    const failure = classifyUpstreamError(new UpstreamHttpError(400, null, readProviderError(coded)), none);
    expect(failure.outcome).toBe('prefill_refused');
    expect(isRetryable('prefill_refused')).toBe(true);
    expect(toFinalError(failure, 0).code).toBe('upstream_rejected');
  });

  it('rethrows errors that are not upstream failures', () => {
    expect(() => classifyUpstreamError(new RangeError('bug'), none)).toThrow(RangeError);
  });
});

describe('final error', () => {
  it('maps the last outcome to the status the caller sees', () => {
    expect(toFinalError({ outcome: 'timeout', retryAfter: null }, 0).status).toBe(504);
    expect(toFinalError({ outcome: 'server_error', retryAfter: null }, 0).status).toBe(502);
    expect(toFinalError({ outcome: 'request_rejected', retryAfter: null }, 0).status).toBe(400);
    expect(toFinalError(undefined, 0).status).toBe(503);
    const limited = toFinalError({ outcome: 'rate_limited', retryAfter: '12' }, 0);
    expect(limited.status).toBe(429);
    expect(limited.headers).toEqual({ 'Retry-After': '12' });
  });

  it('reads Retry-After as seconds or as a date, with a default', () => {
    expect(retryAfterSeconds('2.5', 0)).toBe(3);
    expect(retryAfterSeconds(new Date(10_000).toUTCString(), 0)).toBe(10);
    expect(retryAfterSeconds(null, 0)).toBe(30);
  });
});

describe('same-target retry', () => {
  const policy = DEFAULT_RETRY_POLICY;
  const fail = (outcome: Parameters<typeof isRetryable>[0], extra: object = {}) => ({
    outcome,
    status: undefined,
    retryAfter: null,
    ...extra,
  });

  it('honours a 429 Retry-After up to the cap, else fails over at once', () => {
    expect(retryDelayMs(fail('rate_limited', { status: 429, retryAfter: '2' }), policy, 0)).toBe(2000);
    expect(retryDelayMs(fail('rate_limited', { status: 429, retryAfter: '30' }), policy, 0)).toBeNull();
    expect(retryDelayMs(fail('rate_limited', { status: 429 }), policy, 0)).toBeNull();
  });

  it('retries a 5xx and a reset after a jittered backoff, never a timeout, a 4xx or a refusal', () => {
    expect(retryDelayMs(fail('server_error', { status: 500 }), policy, 0, () => 0)).toBe(100);
    expect(retryDelayMs(fail('server_error', { status: 503 }), policy, 0, () => 1)).toBe(200);
    expect(retryDelayMs(fail('connection_error', { reset: true }), policy, 0, () => 0.5)).toBe(150);
    expect(retryDelayMs(fail('connection_error'), policy, 0)).toBeNull();
    expect(retryDelayMs(fail('timeout'), policy, 0)).toBeNull();
    expect(retryDelayMs(fail('provider_refused', { status: 401 }), policy, 0)).toBeNull();
    expect(retryDelayMs(fail('request_rejected', { status: 400 }), policy, 0)).toBeNull();
    expect(retryDelayMs(fail('context_exceeded', { status: 400 }), policy, 0)).toBeNull();
    // An unreadable 2xx body is no status: not retried on the same target.
    expect(retryDelayMs(fail('server_error'), policy, 0)).toBeNull();
  });
});
