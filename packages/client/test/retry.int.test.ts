import {
  createGatewayClient,
  createPaymentClient,
  NetworkError,
  PlatformApiError,
  type RetryEvent,
} from '../src';
import { errorStep, type ScriptedServer, type Step, startScriptedServer, waitUntil } from './scripted-server';

// Real sockets need setImmediate/nextTick; everything else, Date included, is fake,
// so the waits between attempts are asserted exactly and the test takes no real time.
const FAKE_TIMERS: Parameters<typeof jest.useFakeTimers>[0] = {
  doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
};

const STATUS = {
  status: 'active',
  subscription_id: 'sub_1',
  current_period_end: '2026-12-21T10:00:00Z',
  product_id: 'prod_1',
};
const CHECKOUT = {
  checkout_session_id: 'cs_test_1',
  checkout_url: 'https://checkout.stripe.com/c/pay/cs_test_1',
};
const CHAT = {
  content: 'hi',
  model_used: 'llama',
  finish_reason: 'stop',
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};
const CHAT_REQUEST = {
  lane: 'free',
  project_id: 'p1',
  messages: [{ role: 'user' as const, content: 'hello' }],
};
const CHECKOUT_REQUEST = {
  user_id: 'u1',
  email: 'ada@example.com',
  price_id: 'price_1',
  success_url: 'https://app.example.com/ok',
  cancel_url: 'https://app.example.com/cancel',
};

const servers: ScriptedServer[] = [];
afterEach(async () => {
  jest.useRealTimers();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Starts the script and a client whose fetch calls and retry events the test can watch. */
async function setup(steps: Step[]) {
  const server = await startScriptedServer(steps);
  servers.push(server);
  const retries: RetryEvent[] = [];
  let fetchCalls = 0;
  const options = {
    baseUrl: server.url,
    apiKey: 'test-key',
    fetch: ((input, init) => {
      fetchCalls += 1;
      return fetch(input, init);
    }) as typeof fetch,
    onRetry: (event: RetryEvent) => retries.push(event),
  };
  return {
    server,
    retries,
    fetchCalls: () => fetchCalls,
    payment: createPaymentClient(options),
    gateway: createGatewayClient(options),
  };
}

/**
 * Walks a call through its backoff waits on the fake clock: for each expected
 * wait it checks that nothing is sent 1 ms early and the next attempt leaves on time.
 */
async function stepThroughWaits(ctx: Awaited<ReturnType<typeof setup>>, waits: number[]): Promise<void> {
  for (const [i, wait] of waits.entries()) {
    await waitUntil(() => ctx.retries.length === i + 1, `retry ${i + 1}`);
    expect(ctx.retries[i]!.delayMs).toBe(wait);
    await jest.advanceTimersByTimeAsync(wait - 1);
    expect(ctx.fetchCalls()).toBe(i + 1);
    await jest.advanceTimersByTimeAsync(1);
    expect(ctx.fetchCalls()).toBe(i + 2);
    await waitUntil(() => ctx.server.requests.length === i + 2, `attempt ${i + 2}`);
  }
}

function arrivalGaps(requests: { at: number }[]): number[] {
  return requests.slice(1).map((r, i) => r.at - requests[i]!.at);
}

describe('retry policy against a scripted server', () => {
  it('does not retry a 401 and reports the spec error with its request id', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([errorStep(401, 'invalid api key'), { status: 200, body: STATUS }]);
    const error = await ctx.payment
      .getSubscriptionStatus({ user_id: 'u1', product_id: 'prod_1' })
      .catch((e) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 401, error: 'invalid api key', attempts: 1 });
    expect(error.requestId).toBe(ctx.server.requests[0]!.headers['x-request-id']);
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.retries).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('waits Retry-After seconds on a 429, then succeeds', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([
      errorStep(429, 'rate_limited', { 'retry-after': '3' }),
      { status: 200, body: STATUS },
    ]);
    const result = ctx.payment.getSubscriptionStatus({ user_id: 'u1', product_id: 'prod_1' });
    await stepThroughWaits(ctx, [3000]);
    await expect(result).resolves.toEqual(STATUS);
    expect(arrivalGaps(ctx.server.requests)).toEqual([3000]);
    expect(ctx.retries[0]).toMatchObject({ attempt: 1, status: 429, error: 'rate_limited' });
  });

  it('waits until an HTTP-date Retry-After, then backs off on further 429s and reports after 3 retries', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    jest.setSystemTime(new Date('2026-11-21T10:00:00.000Z'));
    const limited = () => errorStep(429, 'rate_limited', { 'retry-after': 'Sat, 21 Nov 2026 10:00:05 GMT' });
    const ctx = await setup([limited(), limited(), limited(), limited()]);
    const settled = ctx.gateway.chat(CHAT_REQUEST).catch((e) => e);
    // 5 s to the date; then the date has passed (Retry-After 0), so the backoff steps 2 s and 4 s rule.
    await stepThroughWaits(ctx, [5000, 2000, 4000]);
    const error = await settled;
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 429, error: 'rate_limited', attempts: 4, retryAfterMs: 0 });
    expect(arrivalGaps(ctx.server.requests)).toEqual([5000, 2000, 4000]);
  });

  it('backs a 504 off 2 s, 4 s, 8 s and reports after 3 retries with every request id', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const timeout = () => errorStep(504, 'upstream AI service timed out');
    const ctx = await setup([timeout(), timeout(), timeout(), timeout(), { status: 200, body: CHAT }]);
    const settled = ctx.gateway.chat(CHAT_REQUEST).catch((e) => e);
    await stepThroughWaits(ctx, [2000, 4000, 8000]);
    const error = await settled;
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 504, error: 'upstream AI service timed out', attempts: 4 });
    const sentIds = ctx.server.requests.map((r) => r.headers['x-request-id']);
    expect(new Set(sentIds).size).toBe(4);
    expect(error.requestIds).toEqual(sentIds);
    expect(error.requestId).toBe(sentIds[3]);
    expect(arrivalGaps(ctx.server.requests)).toEqual([2000, 4000, 8000]);
    expect(ctx.server.requests).toHaveLength(4);
  });

  it('retries another 5xx exactly once', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([
      errorStep(500, 'internal'),
      errorStep(503, 'service_unavailable'),
      { status: 200, body: STATUS },
    ]);
    const settled = ctx.payment
      .getSubscriptionStatus({ user_id: 'u1', product_id: 'prod_1' })
      .catch((e) => e);
    await stepThroughWaits(ctx, [2000]);
    const error = await settled;
    expect(error).toMatchObject({ status: 503, error: 'service_unavailable', attempts: 2 });
    expect(ctx.server.requests).toHaveLength(2);
  });

  it('retries a proxy 502 page once and reports it as http_502 when it stays', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const page = { status: 502, raw: '<html>Bad Gateway</html>' };
    const ctx = await setup([page, { status: 200, body: CHAT }]);
    const result = ctx.gateway.chat(CHAT_REQUEST);
    await stepThroughWaits(ctx, [2000]);
    await expect(result).resolves.toEqual(CHAT);
    const again = await setup([page, page]);
    const settled = again.gateway.chat(CHAT_REQUEST).catch((e) => e);
    await stepThroughWaits(again, [2000]);
    expect(await settled).toMatchObject({ status: 502, error: 'http_502', attempts: 2 });
  });

  it('backs network drops off and keeps the request id of the earlier response', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([
      errorStep(504, 'upstream AI service timed out'),
      { drop: true },
      { drop: true },
      { drop: true },
    ]);
    const settled = ctx.gateway.chat(CHAT_REQUEST).catch((e) => e);
    await stepThroughWaits(ctx, [2000, 4000, 8000]);
    const error = await settled;
    expect(error).toBeInstanceOf(NetworkError);
    const firstId = ctx.server.requests[0]!.headers['x-request-id'];
    expect(error).toMatchObject({ attempts: 4, requestId: firstId });
    expect(error.requestIds).toEqual([firstId]);
    expect(error.history.map((a: { status?: number }) => a.status)).toEqual([
      504,
      undefined,
      undefined,
      undefined,
    ]);
    expect(error.message).toMatch(/^network error/);
  });

  it('recovers from a dropped connection on the next attempt', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([{ drop: true }, { status: 200, body: CHAT }]);
    const result = ctx.gateway.chat(CHAT_REQUEST);
    await stepThroughWaits(ctx, [2000]);
    await expect(result).resolves.toEqual(CHAT);
  });
});

describe('payment POSTs and idempotency', () => {
  it('sends one Idempotency-Key per logical call and reuses it on the retry', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([
      errorStep(504, 'gateway timeout'),
      { status: 200, body: CHECKOUT },
      { status: 200, body: CHECKOUT },
    ]);
    const first = ctx.payment.createItemCheckout(CHECKOUT_REQUEST);
    await stepThroughWaits(ctx, [2000]);
    await expect(first).resolves.toEqual(CHECKOUT);
    await ctx.payment.createItemCheckout(CHECKOUT_REQUEST);
    const keys = ctx.server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(ctx.server.requests[0]!.headers['x-api-key']).toBe('test-key');
    expect(JSON.parse(ctx.server.requests[1]!.body)).toEqual(CHECKOUT_REQUEST);
  });

  it('uses the caller’s idempotency key when given', async () => {
    const ctx = await setup([
      { status: 200, body: { portal_url: 'https://billing.stripe.com/p/session/x' } },
    ]);
    await ctx.payment.createPortalSession(
      { user_id: 'u1', return_url: 'https://app.example.com' },
      { idempotencyKey: 'order-42' },
    );
    expect(ctx.server.requests[0]!.headers['idempotency-key']).toBe('order-42');
  });
});

describe('abort and timeouts', () => {
  it('a caller signal aborts the backoff wait and nothing more is sent', async () => {
    jest.useFakeTimers(FAKE_TIMERS);
    const ctx = await setup([errorStep(504, 'upstream AI service timed out'), { status: 200, body: CHAT }]);
    const controller = new AbortController();
    const settled = ctx.gateway.chat(CHAT_REQUEST, { signal: controller.signal }).catch((e) => e);
    await waitUntil(() => ctx.retries.length === 1, 'the first retry');
    controller.abort();
    const error = await settled;
    expect(error).toBe(controller.signal.reason);
    expect(error.name).toBe('AbortError');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(ctx.fetchCalls()).toBe(1);
  });

  it('an attempt without an answer times out and counts as a network error', async () => {
    const hang: Step = { handle: () => undefined };
    const ctx = await setup([hang, { status: 200, body: CHAT }]);
    const client = createGatewayClient({
      baseUrl: ctx.server.url,
      apiKey: 'k',
      timeoutMs: 50,
      retry: { backoffMs: [1] },
      onRetry: (e) => ctx.retries.push(e),
    });
    await expect(client.chat(CHAT_REQUEST)).resolves.toEqual(CHAT);
    expect(ctx.retries[0]).toMatchObject({ attempt: 1, error: 'no response within 50 ms', delayMs: 1 });
  });

  it('retry: false on a call sends exactly once', async () => {
    const ctx = await setup([errorStep(504, 'upstream AI service timed out')]);
    const error = await ctx.gateway.chat(CHAT_REQUEST, { retry: false }).catch((e) => e);
    expect(error).toMatchObject({ status: 504, attempts: 1 });
  });
});
