import request from 'supertest';
import { createApiKey } from '../src/api-keys/create-api-key';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const body = { lane: 'free', project_id: 'limits', messages: [{ role: 'user', content: 'hi' }] };

let h: AiHarness;
let caller: TestCaller;
useAiHarness({}, (state) => {
  ({ h, caller } = state);
});

function chat(app: AiHarness['app'], apiKey = caller.apiKey) {
  return request(app).post('/api/v1/ai/chat/completions').set('x-api-key', apiKey).send(body);
}

function expectRateLimited(res: request.Response, maxSeconds: number, budget?: string) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: 'rate_limited',
    code: 'rate_limited',
    request_id: expect.stringMatching(UUID),
    ...(budget ? { details: [{ path: budget, message: expect.any(String) }] } : {}),
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
}

describe('AI limits', () => {
  it('request rate per API key -> 429 rate_limited with Retry-After; another key is not affected', async () => {
    const app = h.startInstance({ AI_RATE_LIMIT_PER_MINUTE: '2' });
    expect((await chat(app)).status).toBe(200);
    expect((await chat(app)).status).toBe(200);
    expectRateLimited(await chat(app), 60);
    expect(h.openaiRequests()).toHaveLength(2);

    const second = await createApiKey(h.deps, { userId: caller.userId, name: 'second', scope: 'ai' });
    expect((await chat(app, second.key)).status).toBe(200);
  });

  it('daily token budget per user -> 429 rate_limited with Retry-After until UTC midnight', async () => {
    const app = h.startInstance({ AI_DAILY_TOKEN_BUDGET: '10' });
    h.openai.set({ usage: { prompt_tokens: 6, completion_tokens: 6 } });
    expect((await chat(app)).status).toBe(200);
    // Settled before the answer's last byte: the next request is refused at once.
    expectRateLimited(await chat(app), 86_400, 'budget.user.daily.tokens');
    // The budget is per user: the same user's other key is refused too.
    const second = await createApiKey(h.deps, { userId: caller.userId, name: 'other', scope: 'ai' });
    expectRateLimited(await chat(app, second.key), 86_400, 'budget.user.daily.tokens');
  });

  it('an upstream 429 on every target -> 429 rate_limited with the Retry-After of the last one', async () => {
    h.openai.set({ status: 429, retryAfter: 7 });
    const res = await chat(h.app);
    expectRateLimited(res, 7);
    expect(res.headers['retry-after']).toBe('7');
    expect(h.openaiRequests()).toHaveLength(3);
  });

  it('an upstream 429 that a later target absorbs is invisible to the caller', async () => {
    h.openai.setFor('free-a', { status: 429 });
    const res = await chat(h.app);
    expect(res.status).toBe(200);
    expect(res.body.model_used).toBe('free-b');
  });
});
