import { listenLoopback } from '@platform/testing';
import type { Express } from 'express';
import request from 'supertest';
import { usageEventOf } from '../src/billing/events';
import {
  type AiHarness,
  TEST_LANES,
  type TestCaller,
  useAiHarness,
  writeTempJson,
} from './support/ai-harness';
import { parseSse } from './support/sse';

/**
 * Issue 39, pricing and reservation: media is money, reservations cover what
 * can be spent (tools, max_completion_tokens, embeddings, continuations,
 * reasoning), and a request that can never fit a budget says so.
 */
let h: AiHarness;
let caller: TestCaller;

const SERVICE_TOKEN = 'money-edges-service-token-0123456789abcdef';
const LANES = {
  ...TEST_LANES,
  lanes: {
    ...TEST_LANES.lanes,
    standard: { ...TEST_LANES.lanes.standard, embedding_targets: [{ provider: 'openai', model: 'emb-1' }] },
  },
  prices: { ...TEST_LANES.prices, 'openai/emb-1': { input: 1, output: 0 } },
};
const lanesFile = () => writeTempJson('lanes.json', LANES);
// Only the budgets under test refuse here.
const BASE = { AI_RATE_LIMIT_PER_MINUTE: '100000' };

useAiHarness(
  () => ({ ...BASE, AI_LANES_CONFIG: lanesFile(), GATEWAY_SERVICE_TOKEN: SERVICE_TOKEN }),
  (state) => {
    ({ h, caller } = state);
  },
);

/** An instance with the test lanes and `env` on top (budgets). */
function instance(env: Record<string, string>): Express {
  return h.startInstance({ ...BASE, AI_LANES_CONFIG: lanesFile(), ...env });
}

function post(app: Express, path: string, body: object) {
  return request(app).post(path).set('x-api-key', caller.apiKey).send(body);
}

async function rows() {
  await h.usage.flush();
  return h.prisma.usageRecord.findMany({ where: { userId: caller.userId }, orderBy: { createdAt: 'asc' } });
}

function expectNeverFits(res: request.Response, path: string) {
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('request exceeds budget');
  expect(res.body.details).toEqual([
    { path, message: expect.stringContaining('is smaller than this request') },
  ]);
  // A retry cannot help: no Retry-After.
  expect(res.headers['retry-after']).toBeUndefined();
}

describe('media is money', () => {
  it('images against a 1-micro cost budget: no more than one is served, and the refusal names the budget', async () => {
    const app = instance({ AI_BUDGET_DEFAULTS: 'project.monthly.cost=1' });
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => post(app, '/api/v1/ai/image', { prompt: 'x', project_id: 'pics' })),
    );
    const served = responses.filter((r) => r.status === 200).length;
    expect(served).toBeLessThanOrEqual(1);
    expect(h.openaiRequests().filter((r) => r.path === '/v1/images/generations')).toHaveLength(served);
    // An image (40,000 micro-units for dall-e-3 at 1024x1024) can never fit 1 micro-unit.
    for (const r of responses.filter((x) => x.status !== 200))
      expectNeverFits(r, 'budget.project.monthly.cost');
  });

  it('4 concurrent images against a budget for 2: exactly 2 served, each recorded at its price', async () => {
    const app = instance({ AI_BUDGET_DEFAULTS: 'project.monthly.cost=80000' });
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => post(app, '/api/v1/ai/image', { prompt: 'x', project_id: 'two' })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
    const spent = responses.find((r) => r.status === 429);
    expect(spent?.body.details[0].path).toBe('budget.project.monthly.cost');
    expect(Number(spent?.headers['retry-after'])).toBeGreaterThan(0);
    const records = (await rows()).filter((r) => r.status === 200);
    expect(records.map((r) => [r.endpoint, r.costMicros])).toEqual([
      ['image', 40_000n],
      ['image', 40_000n],
    ]);
  });

  it('image and speech records carry their cost and reach the billing feed as usage events', async () => {
    expect((await post(h.app, '/api/v1/ai/image', { prompt: 'x', project_id: 'feed', n: 2 })).status).toBe(
      200,
    );
    expect((await post(h.app, '/api/v1/ai/tts', { text: 'a'.repeat(1000), project_id: 'feed' })).status).toBe(
      200,
    );
    const records = await rows();
    // dall-e-3 at 0.04 a 1024x1024 image; tts-1 at 15 per million characters.
    expect(records.map((r) => [r.endpoint, r.costMicros])).toEqual([
      ['image', 80_000n],
      ['tts', 15_000n],
    ]);
    let feed: { cost_micros: number; endpoint: string; user_id: string }[] = [];
    for (let i = 0; i < 50; i += 1) {
      const res = await request(h.app)
        .get(`/api/v1/usage/feed?user_id=${caller.userId}`)
        .set('authorization', `Bearer ${SERVICE_TOKEN}`);
      feed = res.body.records;
      if (feed.length >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(feed.map((r) => [r.endpoint, r.cost_micros])).toEqual([
      ['image', 80_000],
      ['tts', 15_000],
    ]);
    // The shipper's rules (BILLING_QUANTITY total_tokens by default) turn each into an event of its cost.
    const rules = h.deps.billing.rules;
    for (const row of feed) {
      expect(usageEventOf(rules, row as Parameters<typeof usageEventOf>[1]).event?.value).toBe(
        row.cost_micros,
      );
    }
  });

  it("a paid media section is checked even when the request names lane 'free'", async () => {
    const payment = await listenLoopback((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 'none',
          subscription_id: '',
          current_period_end: '0001-01-01T00:00:00Z',
          product_id: '',
          ...(req.url?.includes('/entitlements') ? { entitled: false } : {}),
        }),
      );
    });
    try {
      const lanes = { ...LANES, media_billing: { mode: 'paid', product: 'prod_media', meter: 'media_cost' } };
      const app = h.startInstance({
        ...BASE,
        AI_LANES_CONFIG: writeTempJson('lanes.json', lanes),
        PAYMENT_URL: payment.url,
        PAYMENT_API_KEY: 'payment-key-0123456789abcdef-0123456789',
        BILLING_SHIPPER: 'off',
      });
      const res = await post(app, '/api/v1/ai/image', { prompt: 'x', project_id: 'p', lane: 'free' });
      expect(res.status).toBe(402);
      expect(res.body.error).toBe('subscription required');
      expect(h.openaiRequests()).toHaveLength(0);
    } finally {
      await payment.close();
    }
  });
});

/** ~10k tokens of tool definitions (o200k counts each numbered word about once). */
const BIG_TOOLS = Array.from({ length: 10 }, (_, i) => ({
  type: 'function',
  function: {
    name: `tool_${i}`,
    description: Array.from({ length: 500 }, (_, j) => `word${(i * 500 + j) % 997}`).join(' '),
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
  },
}));

describe('reservations cover what can be spent', () => {
  it('requests whose ~10k tokens of tools exceed a 2,000-token budget are refused outright, naming it', async () => {
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '2000' });
    h.openai.set({ usage: { prompt_tokens: 10_050, completion_tokens: 10 }, latencyMs: 30 });
    const body = {
      model: 'free',
      messages: [{ role: 'user', content: 'hi' }],
      tools: BIG_TOOLS,
      max_tokens: 50,
    };
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => post(app, '/v1/chat/completions', body)),
    );
    const served = responses
      .filter((r) => r.status === 200)
      .reduce((sum, r) => sum + (r.body as { usage: { total_tokens: number } }).usage.total_tokens, 0);
    expect(served).toBeLessThanOrEqual(2000);
    for (const r of responses) expect(r.status).toBe(400);
    expect(responses[0]?.body.error.message).toContain('budget.user.daily.tokens');
    expect(responses[0]?.headers['retry-after']).toBeUndefined();
  });

  it('4 concurrent requests with ~10k tokens of tools against 25,000 tokens: the tools are reserved, none served past it', async () => {
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '25000' });
    // Slow enough that every request has reserved before the first one settles.
    h.openai.set({ usage: { prompt_tokens: 10_050, completion_tokens: 10 }, latencyMs: 400 });
    const body = {
      model: 'free',
      messages: [{ role: 'user', content: 'hi' }],
      tools: BIG_TOOLS,
      max_tokens: 10,
    };
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => post(app, '/v1/chat/completions', body)),
    );
    const served = responses
      .filter((r) => r.status === 200)
      .reduce((sum, r) => sum + (r.body as { usage: { total_tokens: number } }).usage.total_tokens, 0);
    // Counting only the message text, all four fit (40,240 tokens served).
    expect(served).toBeLessThanOrEqual(25_000);
    expect(responses.filter((r) => r.status === 200).length).toBe(2);
    expect(responses.filter((r) => r.status === 429).length).toBe(2);
  });

  it('max_completion_tokens is reserved: the cap sent upstream stays within the budget, no max_tokens added', async () => {
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '10000' });
    const body = {
      model: 'free',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 50_000,
    };
    expect((await post(app, '/v1/chat/completions', body)).status).toBe(200);
    const upstream = h.openaiRequests()[0]?.body as Record<string, unknown>;
    expect(upstream.max_completion_tokens).toBeLessThanOrEqual(10_000);
    // Reasoning models refuse max_tokens: none is added.
    expect(upstream.max_tokens).toBeUndefined();
  });

  it('4 concurrent requests with max_completion_tokens 20,000 against 30,000 tokens: some are refused', async () => {
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '30000' });
    // A model that writes all it may (the fake reports it whatever cap it was sent).
    // Slow enough that every request has reserved before the first one settles.
    h.openai.set({ usage: { prompt_tokens: 8, completion_tokens: 20_000 }, latencyMs: 400 });
    const body = {
      model: 'free',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 20_000,
    };
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => post(app, '/v1/chat/completions', body)),
    );
    const served = responses
      .filter((r) => r.status === 200)
      .reduce((sum, r) => sum + (r.body as { usage: { total_tokens: number } }).usage.total_tokens, 0);
    expect(served).toBeLessThanOrEqual(30_000 + 20_008);
    expect(responses.filter((r) => r.status === 429).length).toBeGreaterThan(0);
  });

  it('embeddings reserve their input: 6 concurrent against a 100-token budget stay within it', async () => {
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '100' });
    h.openai.set({ usage: { prompt_tokens: 30 }, latencyMs: 30 });
    const input = Array.from({ length: 15 }, (_, i) => `w${i}`).join(' ');
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => post(app, '/v1/embeddings', { model: 'standard', input })),
    );
    const served = responses.filter((r) => r.status === 200).length;
    // The estimate (30 tokens, o200k) is what the provider reports: nothing past the budget.
    expect(served * 30).toBeLessThanOrEqual(100);
    expect(served).toBeGreaterThanOrEqual(1);
  });

  it('a continuation reserves its own prompt and allowance: refused, the stream ends in an error', async () => {
    // 'hi' plus a 100-token allowance fit; the continuation (prompt, the answer so far, 100 more) does not.
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '115' });
    h.openai.setFor('std-1', { chunks: Array.from({ length: 30 }, (_, i) => `w${i} `), failAfterChunks: 30 });
    const res = await request(app)
      .post('/api/v1/ai/chat/stream')
      .set('x-api-key', caller.apiKey)
      .send({
        lane: 'standard',
        project_id: 'cont',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      });
    expect(res.status).toBe(200);
    const last = parseSse(res.text).events.at(-1);
    expect(last?.event).toBe('error');
    expect((last?.data as { error?: string } | undefined)?.error).toBe('rate_limited');
    // The next target (std-2 accepts prefill) was never asked.
    expect(h.openaiRequests().map((r) => (r.body as { model: string }).model)).toEqual(['std-1']);
  });

  it('reasoning tokens reported outside completion_tokens are priced as output', async () => {
    // free-a: 1 per prompt token, 2 per output token; 100 reasoning tokens only in total_tokens.
    h.openai.set({ usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 115 } });
    const res = await post(h.app, '/api/v1/ai/chat/completions', {
      lane: 'free',
      project_id: 'think',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    const [row] = await rows();
    expect(row?.costMicros).toBe(10n + 2n * 105n);
  });
});

describe('requests that can never fit', () => {
  it('an 8 MiB prompt (128 messages of 64 KiB) is admitted on a fresh account with the default budgets', async () => {
    const content = 'lorem ipsum dolor sit amet '.repeat(2428).slice(0, 64 * 1024);
    const messages = Array.from({ length: 128 }, () => ({ role: 'user', content }));
    h.openai.set({ usage: { prompt_tokens: 10, completion_tokens: 1 } });
    const res = await post(h.app, '/api/v1/ai/chat/completions', {
      lane: 'free',
      project_id: 'big',
      messages,
    });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expect.anything() });
  });

  it('a prompt larger than a whole budget window is refused naming the budget, without Retry-After', async () => {
    const app = instance({ AI_DAILY_TOKEN_BUDGET: '1000' });
    const content = Array.from({ length: 3000 }, (_, i) => `x${i}`).join(' ');
    const res = await post(app, '/api/v1/ai/chat/completions', {
      lane: 'free',
      project_id: 'huge',
      messages: [{ role: 'user', content }],
    });
    expectNeverFits(res, 'budget.user.daily.tokens');
    expect(res.body.details[0].message).toMatch(/^daily tokens budget of user \(1000 tokens\)/);
    expect(h.openaiRequests()).toHaveLength(0);
  });
});
