import type { ApiKeyRules } from '@platform/contract';
import request from 'supertest';
import { createApiKey } from '../src/api-keys/create-api-key';
import { type AiHarness, PUBLIC_URL, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Item 2 of issue 42: a key's rules (lanes, models, requests and tokens per
 * minute, concurrent requests, expiry), each refusal naming its rule, and
 * the counted rules holding under concurrency over two instances on one
 * store (Redis when TEST_REDIS_URL is set), as the budgets do.
 */
let h: AiHarness;
let caller: TestCaller;
// The server's own limits out of reach: only the key's rules refuse here.
const ENV = { AI_RATE_LIMIT_PER_MINUTE: '100000', AI_DAILY_TOKEN_BUDGET: '100000000' };
useAiHarness(ENV, (state) => {
  ({ h, caller } = state);
});

const chatBody = { lane: 'free', project_id: 'rules', messages: [{ role: 'user', content: 'hi' }] };

function chat(app: AiHarness['app'], key: string, extra: object = {}) {
  return request(app)
    .post('/api/v1/ai/chat/completions')
    .set('x-api-key', key)
    .send({ ...chatBody, ...extra });
}

async function keyWith(rules: ApiKeyRules, expires_at?: string): Promise<{ key: string; id: string }> {
  const res = await request(h.app)
    .post('/api/v1/auth/api-keys')
    .set('Cookie', caller.cookie)
    .set('Origin', PUBLIC_URL)
    .send({ name: 'governed', rules, ...(expires_at ? { expires_at } : {}) });
  expect(res.status).toBe(201);
  return { key: res.body.key, id: res.body.key_id };
}

function expectRefusal(res: request.Response, status: number, error: string, path: string) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ error, details: [{ path, message: expect.any(String) }] });
  expect(typeof res.body.request_id).toBe('string');
}

/** Waits until at least `needMs` are left in the current UTC minute: per-minute counters reset on the minute. */
async function awayFromMinuteEdge(needMs: number) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50));
}

const counts = (rs: request.Response[]) => ({
  ok: rs.filter((r) => r.status === 200).length,
  refused: rs.filter((r) => r.status === 429),
});

describe('key rules', () => {
  it('are stored with the key, listed with it, and replaced through the rules route', async () => {
    const rules = { lanes: ['free'], models: ['groq/free-a'], tokens_per_minute: 500 };
    const { id } = await keyWith(rules);
    const list = await request(h.app).get('/api/v1/auth/api-keys/list').set('Cookie', caller.cookie);
    expect(list.body.keys.find((k: { key_id: string }) => k.key_id === id)).toMatchObject({ rules });

    const update = (body: object) =>
      request(h.app)
        .post('/api/v1/auth/api-keys/rules')
        .set('Cookie', caller.cookie)
        .set('Origin', PUBLIC_URL)
        .send({ key_id: id, ...body });
    const replaced = await update({ rules: { concurrent_requests: 2 }, expires_at: null });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ key_id: id, rules: { concurrent_requests: 2 }, expires_at: null });
    expectRefusal(
      await update({ rules: null, expires_at: '2001-01-01T00:00:00Z' }),
      400,
      'validation failed',
      'expires_at',
    );
    // An unknown rule is a bad body, not ignored.
    expect((await update({ rules: { models_allowed: ['x'] }, expires_at: null })).status).toBe(422);
    // Another user's key looks missing.
    const other = await h.createCaller();
    const foreign = await request(h.app)
      .post('/api/v1/auth/api-keys/rules')
      .set('Cookie', other.cookie)
      .set('Origin', PUBLIC_URL)
      .send({ key_id: id, rules: null, expires_at: null });
    expect(foreign.status).toBe(404);
  });

  it('a lane off the list is 403 naming key.lanes; the model list narrows the targets and refuses when none is left', async () => {
    const laneKey = await keyWith({ lanes: ['standard'] });
    expectRefusal(await chat(h.app, laneKey.key), 403, 'lane not allowed for this api key', 'key.lanes');

    // The free lane's first target is groq/free-a: only cerebras/free-b may answer this key.
    const modelKey = await keyWith({ models: ['cerebras/free-b'] });
    const served = await chat(h.app, modelKey.key);
    expect(served.status).toBe(200);
    expect(served.body.model_used).toBe('free-b');
    expect(h.openaiRequests().map((r) => (r.body as { model: string }).model)).toEqual(['free-b']);

    const noneKey = await keyWith({ models: ['prem-1'] });
    expectRefusal(await chat(h.app, noneKey.key), 403, 'model not allowed for this api key', 'key.models');
    expect(h.openaiRequests()).toHaveLength(1);
  });

  it('an expired key is 401 api key expired on every instance, a rule change applies to a cached key', async () => {
    const { key, id } = await keyWith({}, new Date(Date.now() + 60_000).toISOString());
    expect((await chat(h.app, key)).status).toBe(200);
    // Time passes (the row's expiry moves to the past): the cached copy is dropped by the change route's broadcast.
    await h.prisma.apiKey.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await h.deps.apiKeys.announceChange((await h.prisma.apiKey.findUniqueOrThrow({ where: { id } })).hash);
    expectRefusal(await chat(h.app, key), 401, 'api key expired', 'key.expires_at');
    expectRefusal(await chat(h.startInstance(ENV), key), 401, 'api key expired', 'key.expires_at');
    // Also on routes that take a key without limits.
    const me = await request(h.app).get('/api/v1/me').set('x-api-key', key);
    expect(me.status).toBe(401);
    expect(me.body.error).toBe('api key expired');
  });

  it('requests per minute hold over two instances under concurrency, naming key.requests_per_minute', async () => {
    const apps = [h.startInstance(ENV), h.startInstance(ENV)];
    const { key } = await keyWith({ requests_per_minute: 5 });
    await awayFromMinuteEdge(15_000);
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => chat(apps[i % 2] as AiHarness['app'], key)),
    );
    const { ok, refused } = counts(rs);
    expect(ok).toBe(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) expectRefusal(r, 429, 'rate_limited', 'key.requests_per_minute');
    // The caller's other keys are not limited by this key's rule.
    const plain = await createApiKey(h.deps, { userId: caller.userId, name: 'plain', scope: 'ai' });
    expect((await chat(apps[0] as AiHarness['app'], plain.key)).status).toBe(200);
  });

  it('tokens per minute hold over two instances under concurrency: at most one answer past the limit', async () => {
    const apps = [h.startInstance(ENV), h.startInstance(ENV)];
    const { key } = await keyWith({ tokens_per_minute: 100 });
    h.openai.set({ usage: { prompt_tokens: 4, completion_tokens: 4 }, latencyMs: 50 });
    await awayFromMinuteEdge(20_000);
    let served = 0;
    const refused: request.Response[] = [];
    for (let round = 0; round < 3; round += 1) {
      const rs = await Promise.all(
        Array.from({ length: 40 }, (_, i) => chat(apps[i % 2] as AiHarness['app'], key, { max_tokens: 4 })),
      );
      for (const r of rs) if (r.status === 200) served += r.body.usage.total_tokens;
      refused.push(...counts(rs).refused);
    }
    expect(served).toBeLessThanOrEqual(100 + 8);
    expect(served).toBeGreaterThanOrEqual(100 - 8);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expectRefusal(r, 429, 'rate_limited', 'key.tokens_per_minute');
  });

  it('concurrent requests hold over two instances, and the slots come back when the requests end', async () => {
    const apps = [h.startInstance(ENV), h.startInstance(ENV)];
    const { key } = await keyWith({ concurrent_requests: 3 });
    h.openai.set({ latencyMs: 1500 });
    const burst = () =>
      Promise.all(Array.from({ length: 12 }, (_, i) => chat(apps[i % 2] as AiHarness['app'], key)));
    const first = counts(await burst());
    expect(first.ok).toBe(3);
    expect(first.refused).toHaveLength(9);
    for (const r of first.refused) expectRefusal(r, 429, 'rate_limited', 'key.concurrent_requests');
    // Every slot was given back (success or refusal alike): the next burst gets three again.
    expect(counts(await burst()).ok).toBe(3);
  }, 20_000);
});
