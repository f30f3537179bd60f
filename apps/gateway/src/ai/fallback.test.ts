import { AppError } from '@platform/errors';
import { createHttpMetrics, createLogger, createMemoryDestination } from '@platform/logging';
import { createCircuitBreaker } from './circuit-breaker';
import type { Target } from './config/lanes';
import {
  ClientGoneError,
  FallbackExhaustedError,
  type FallbackOptions,
  retryDelayMs,
  runWithFallback,
} from './fallback';
import { createAiMetrics } from './metrics';
import type { ProviderCredential } from './providers/registry';
import { UpstreamHttpError } from './providers/upstream-errors';

// The fallback chain against a fake upstream (a function scripted per target)
// and a fake clock: which targets are tried, in which order, how often, and
// what the caller gets when none answers.

const A: Target = { provider: 'groq', model: 'a' };
const B: Target = { provider: 'openai', model: 'b' };
const C: Target = { provider: 'cerebras', model: 'c' };

const credentialOf = (t: Target): ProviderCredential => ({
  id: `${t.provider}:server`,
  provider: t.provider,
  baseUrl: 'http://127.0.0.1:1',
  apiKey: 'k',
  byok: false,
});

/** What the fake upstream does for one call of a target: answer, throw, hang until aborted, or take `ms` then 503. */
type Step = { answer: string } | { fail: unknown } | { hang: true } | { takes: number };

function harness(script: Partial<Record<string, Step[]>>) {
  let now = 1_000_000;
  const calls: string[] = [];
  const failed: string[] = [];
  const metrics = createAiMetrics(
    createHttpMetrics({ service: 'fallback-test', defaultMetrics: false }).registry,
  );
  const breaker = createCircuitBreaker({ cooldownMs: 10_000, clock: () => now });
  const client = new AbortController();
  const options = (more: Partial<FallbackOptions<string>> = {}): FallbackOptions<string> => ({
    endpoint: 'chat',
    targets: [A, B, C],
    resolveCredential: credentialOf,
    clientSignal: client.signal,
    timeoutMs: 60_000,
    clock: () => now,
    logger: createLogger({
      service: 'fallback-test',
      destination: createMemoryDestination(),
      level: 'fatal',
    }),
    metrics,
    breaker,
    onFailedAttempt: (f) => failed.push(`${f.target.model}:${f.outcome}`),
    attempt: ({ target, signal }) => {
      calls.push(target.model);
      const step = script[target.model]?.shift() ?? { answer: `from ${target.model}` };
      if ('takes' in step) {
        now += step.takes;
        return Promise.reject(new UpstreamHttpError(503, null));
      }
      if ('answer' in step) return Promise.resolve(step.answer);
      if ('fail' in step) return Promise.reject(step.fail);
      return new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    },
    ...more,
  });
  return {
    run: (more?: Partial<FallbackOptions<string>>) => runWithFallback(options(more)),
    calls,
    failed,
    breaker,
    client,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const http = (status: number, retryAfter: string | null = null) => ({
  fail: new UpstreamHttpError(status, retryAfter),
});

async function exhausted(promise: Promise<unknown>): Promise<FallbackExhaustedError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof FallbackExhaustedError))
    throw new Error(`expected FallbackExhaustedError, got ${String(err)}`);
  return err;
}

describe('runWithFallback', () => {
  it('the first target that answers is the result; no other is called', async () => {
    const h = harness({});
    const result = await h.run();
    expect(result).toEqual(expect.objectContaining({ value: 'from a', target: A, attempts: 1, index: 0 }));
    expect(h.calls).toEqual(['a']);
  });

  it('a 5xx, a 429, a refused key and a timeout move on to the next target, in order', async () => {
    const h = harness({ a: [http(503)], b: [http(429)] });
    const result = await h.run();
    expect(result).toEqual(expect.objectContaining({ value: 'from c', target: C, attempts: 3, index: 2 }));
    expect(h.calls).toEqual(['a', 'b', 'c']);
    expect(h.failed).toEqual(['a:server_error', 'b:rate_limited']);
  });

  it('a 4xx caused by the request ends the chain: every provider would refuse it', async () => {
    const h = harness({ a: [http(400)] });
    const err = await exhausted(h.run());
    expect(err.error).toEqual(new AppError('upstream_rejected'));
    expect(err.lastTarget).toBe(A);
    expect(h.calls).toEqual(['a']);
  });

  it('when every target fails the caller gets the last failure, and the last target is named', async () => {
    const h = harness({ a: [http(503)], b: [http(503)], c: [http(429, '12')] });
    const err = await exhausted(h.run());
    expect(err.error.code).toBe('rate_limited');
    expect(err.error.headers).toEqual({ 'Retry-After': '12' });
    expect(err.lastTarget).toBe(C);
  });

  it('a target without a credential is skipped and not counted as an attempt', async () => {
    const h = harness({});
    const result = await h.run({ resolveCredential: (t) => (t === A ? null : credentialOf(t)) });
    expect(result).toEqual(expect.objectContaining({ target: B, attempts: 1, index: 1 }));
    expect(h.calls).toEqual(['b']);
  });

  it('a failed target cools down: the next request skips it, and when all cool down the answer is 503 at once', async () => {
    const h = harness({ a: [http(503)], b: [http(503)], c: [http(503)] });
    await exhausted(h.run());
    expect(h.calls).toEqual(['a', 'b', 'c']);
    h.advance(4_000);
    const err = await exhausted(h.run());
    expect(h.calls).toHaveLength(3);
    expect(err.error.code).toBe('upstream_unavailable');
    // The earliest target may be tried in 6 s (cooldown 10 s, 4 s gone).
    expect(err.error.headers).toEqual({ 'Retry-After': '6' });
  });

  it('with a retry policy, a 5xx is retried on the same target before failing over', async () => {
    const h = harness({ a: [http(502)] });
    const result = await h.run({ retry: { maxRetries: 1, backoffMs: 1, retryAfterMaxMs: 5_000 } });
    expect(result).toEqual(expect.objectContaining({ target: A, attempts: 2, index: 0 }));
    expect(h.calls).toEqual(['a', 'a']);
  });

  it('a request deadline passed while targets failed ends the chain with 504', async () => {
    const h = harness({ a: [{ takes: 2_000 }] });
    const err = await exhausted(h.run({ deadlineMs: 1_000 }));
    expect(err.error.code).toBe('upstream_timeout');
    expect(h.calls).toEqual(['a']);
  });

  it('an attempt that does not start answering in time times out and the next target is tried', async () => {
    const h = harness({ a: [{ hang: true }] });
    const result = await h.run({ timeoutMs: 20 });
    expect(result.target).toBe(B);
    expect(h.failed).toEqual(['a:timeout']);
    expect(h.breaker.isOpen(credentialOf(A), 'a')).toBe(true);
  });

  it('a client that left before or during an attempt ends the chain as ClientGoneError', async () => {
    const before = harness({});
    before.client.abort();
    await expect(before.run()).rejects.toBeInstanceOf(ClientGoneError);
    expect(before.calls).toEqual([]);
    const during = harness({ a: [{ hang: true }] });
    const running = during.run();
    setTimeout(() => during.client.abort(), 10).unref();
    await expect(running).rejects.toBeInstanceOf(ClientGoneError);
    expect(during.calls).toEqual(['a']);
  });
});

describe('retryDelayMs', () => {
  const policy = { maxRetries: 1, backoffMs: 200, retryAfterMaxMs: 5_000 };
  const failure = (outcome: 'rate_limited' | 'server_error' | 'connection_error' | 'timeout', more = {}) => ({
    outcome,
    status: undefined as number | undefined,
    retryAfter: null as string | null,
    ...more,
  });

  it('a 429 waits its Retry-After when it fits, else fails over now', () => {
    expect(retryDelayMs(failure('rate_limited', { retryAfter: '2' }), policy, 0)).toBe(2_000);
    expect(retryDelayMs(failure('rate_limited', { retryAfter: '6' }), policy, 0)).toBeNull();
    expect(retryDelayMs(failure('rate_limited'), policy, 0)).toBeNull();
  });

  it('a 5xx or a reset waits 50-100 % of the backoff; a timeout is never retried', () => {
    expect(retryDelayMs(failure('server_error', { status: 503 }), policy, 0, () => 0)).toBe(100);
    expect(retryDelayMs(failure('connection_error', { reset: true }), policy, 0, () => 1)).toBe(200);
    expect(retryDelayMs(failure('connection_error'), policy, 0)).toBeNull();
    expect(retryDelayMs(failure('timeout'), policy, 0)).toBeNull();
  });
});
