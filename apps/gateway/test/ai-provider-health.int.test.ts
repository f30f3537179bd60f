import { parsePrometheusText } from '@platform/testing';
import request from 'supertest';
import { type AiHarness, startAiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Provider health: a target that timed out, refused the connection or answered
 * 5xx is skipped by the next requests for AI_CIRCUIT_COOLDOWN_MS (per provider
 * and key, with metrics), and AI_REQUEST_DEADLINE_MS bounds the whole chain.
 */
const chatBody = { lane: 'free', project_id: 'health', messages: [{ role: 'user', content: 'hi' }] };
const modelOf = (r: { body: unknown }) => (r.body as { model?: string }).model;

async function metric(h: AiHarness, name: string, provider: string): Promise<number> {
  const res = await request(h.app).get('/metrics');
  const family = parsePrometheusText(res.text).find((f) => f.name === name);
  const value = family?.metrics.find((m) => m.labels?.provider === provider)?.value;
  return value === undefined ? 0 : Number(value);
}

describe('circuit breaker per provider, key and model', () => {
  let h: AiHarness;
  let caller: TestCaller;
  useAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '1500', AI_CIRCUIT_COOLDOWN_MS: '60000' }, (state) => {
    ({ h, caller } = state);
  });

  it('a dead first provider is waited for once; the next request answers from the second at once', async () => {
    h.openai.setFor('free-a', { hang: true });
    h.openai.setFor('free-b', { content: 'from b' });
    const send = () =>
      request(h.app).post('/api/v1/ai/chat/completions').set('x-api-key', caller.apiKey).send(chatBody);

    const first = await send();
    expect(first.status).toBe(200);
    expect(h.openaiRequests().map(modelOf)).toEqual(['free-a', 'free-b']);

    const second = await send();
    expect(second.status).toBe(200);
    expect(second.body.content).toBe('from b');
    // free-a was not contacted again: it is cooling down.
    expect(h.openaiRequests().map(modelOf)).toEqual(['free-a', 'free-b', 'free-b']);
    expect(await metric(h, 'ai_circuit_opened_total', 'groq')).toBe(1);
    expect(await metric(h, 'ai_circuit_skipped_total', 'groq')).toBeGreaterThanOrEqual(1);
  });

  it('a 5xx opens the circuit of that provider only; a 4xx the request caused does not', async () => {
    h.openai.setFor('std-1', { status: 400 });
    const standard = { ...chatBody, lane: 'standard' };
    const rejected = await request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send(standard);
    expect(rejected.status).toBe(400);
    h.openai.setFor('std-1', { content: 'fine' });
    const again = await request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send(standard);
    expect(again.status).toBe(200);
    expect(h.openaiRequests().map(modelOf)).toEqual(['std-1', 'std-1']);
  });

  it('when every target is cooling down the answer is 503 at once with Retry-After', async () => {
    h.openai.set({ status: 503 });
    const premium = { ...chatBody, lane: 'premium' };
    const send = () =>
      request(h.app).post('/api/v1/ai/chat/completions').set('x-api-key', caller.apiKey).send(premium);
    expect((await send()).status).toBe(502);
    const cooling = await send();
    expect(cooling.status).toBe(503);
    expect(cooling.body).toEqual({
      error: 'upstream AI service unavailable',
      code: 'upstream_unavailable',
      request_id: expect.any(String),
    });
    expect(Number(cooling.headers['retry-after'])).toBeGreaterThan(0);
    // The first request's try and its one retry; the second request contacted nobody.
    expect(h.openaiRequests()).toHaveLength(2);
  });
});

describe('circuit breaker cooldown', () => {
  let h: AiHarness;
  beforeAll(async () => {
    // Long enough that the second request, however slow the machine, still falls in the cooldown.
    h = await startAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '1500', AI_CIRCUIT_COOLDOWN_MS: '3000' });
  });
  afterAll(() => h.close());

  it('after the cooldown one request tries the target again, and its success closes the circuit', async () => {
    const caller = await h.createCaller();
    const send = () =>
      request(h.app).post('/api/v1/ai/chat/completions').set('x-api-key', caller.apiKey).send(chatBody);
    h.openai.setFor('free-a', { status: 500 });
    expect((await send()).status).toBe(200);
    h.openai.setFor('free-a', { content: 'a is back' });
    expect((await send()).body.content).not.toBe('a is back');
    await new Promise((r) => setTimeout(r, 3050));
    expect((await send()).body.content).toBe('a is back');
    expect((await send()).body.content).toBe('a is back');
  });
});

describe('request deadline', () => {
  let h: AiHarness;
  beforeAll(async () => {
    h = await startAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '5000', AI_REQUEST_DEADLINE_MS: '600' });
  });
  afterAll(() => h.close());

  it('bounds the whole fallback chain: 504 within the deadline plus 1 s although each target may take 5 s', async () => {
    const caller = await h.createCaller();
    h.openai.set({ hang: true });
    const res = await request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send(chatBody)
      .timeout(1600);
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      error: 'upstream AI service timed out',
      code: 'upstream_timeout',
      request_id: expect.any(String),
    });
  });

  it('streams too: 504 before the first event', async () => {
    const caller = await h.createCaller();
    h.openai.set({ hang: true });
    const res = await request(h.app)
      .post('/api/v1/ai/chat/stream')
      .set('x-api-key', caller.apiKey)
      .send(chatBody)
      .timeout(1600);
    expect(res.status).toBe(504);
  });
});
