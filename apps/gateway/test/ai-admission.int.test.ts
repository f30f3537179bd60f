import request from 'supertest';
import { hashApiKey } from '../src/auth/api-key-hash';
import { revocationMarkerKey } from '../src/auth/api-key-verifier';
import { type AiHarness, SECRET, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * A key this instance has cached is let through with no store read, and its
 * revocation read and rate hit ride in the budget reservation's script
 * (admission/pending.ts). These tests hold the answers to what they were
 * when the check ran before the body: one rate hit per request whatever its
 * fate, 429 and 401 before a bad body's 400, and a revocation honoured at once
 * even while the instance still has the key cached.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness({}, (state) => {
  ({ h, caller } = state);
});

const good = { lane: 'free', project_id: 'admission', messages: [{ role: 'user', content: 'hi' }] };
const bad = { lane: 'free', messages: 'not a list' };

function post(app: AiHarness['app'], body: object, path = '/api/v1/ai/chat/completions') {
  return request(app).post(path).set('x-api-key', caller.apiKey).send(body);
}

/** The OpenAI-compatible route, with the key as its SDKs send it. */
function postOpenAi(app: AiHarness['app'], body: object) {
  return request(app).post('/v1/chat/completions').set('authorization', `Bearer ${caller.apiKey}`).send(body);
}

describe('admission folded into the reservation (a cached key)', () => {
  it('counts one rate hit per request, answered or refused for its body', async () => {
    const app = h.startInstance({ AI_RATE_LIMIT_PER_MINUTE: '4' });
    // The first request checks the key before its body and caches it; the rest take the folded path.
    const statuses = [];
    for (const body of [good, bad, good, bad]) statuses.push((await post(app, body)).status);
    expect(statuses).toEqual([200, 422, 200, 422]);
    // Five hits: over the limit of 4 whatever the body.
    const fifth = await post(app, good);
    expect(fifth.status).toBe(429);
    expect(Number(fifth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(h.openaiRequests()).toHaveLength(2);
  });

  it('a rate-limited key gets 429 before its body is looked at, on every route', async () => {
    const app = h.startInstance({ AI_RATE_LIMIT_PER_MINUTE: '1' });
    expect((await post(app, good)).status).toBe(200);
    expect((await post(app, good)).status).toBe(429);
    // Refused in the reservation's script once: from now on checked before the body.
    expect((await post(app, bad)).status).toBe(429);
    expect((await postOpenAi(app, { model: 'nope', messages: 'x' })).status).toBe(429);
    expect((await post(app, { model: 'free', max_tokens: 'x' }, '/v1/messages')).status).toBe(429);
    expect(h.openaiRequests()).toHaveLength(1);
  });

  it('a revocation marker is honoured at once although the instance still has the key cached', async () => {
    const app = h.startInstance({});
    expect((await post(app, good)).status).toBe(200);
    expect((await post(app, good)).status).toBe(200);
    // The marker alone, as another instance's revoke leaves it when this one missed the broadcast.
    await h.kv.set(revocationMarkerKey(hashApiKey(caller.apiKey, SECRET)), '1', 60_000);
    const revoked = await post(app, good);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ code: 'invalid_api_key' });
    // A bad body does not hide it, on the OpenAI route either.
    expect((await post(app, bad)).status).toBe(401);
    const openai = await postOpenAi(app, { model: 'free', messages: [{ role: 'user', content: 'hi' }] });
    expect(openai.status).toBe(401);
    expect(h.openaiRequests()).toHaveLength(2);
  });

  it('the rate is checked before the budgets: a spent budget still counts each hit', async () => {
    const app = h.startInstance({ AI_DAILY_TOKEN_BUDGET: '10', AI_RATE_LIMIT_PER_MINUTE: '3' });
    h.openai.set({ usage: { prompt_tokens: 4, completion_tokens: 4 } });
    expect((await post(app, good)).status).toBe(200);
    // 8 of 10 tokens used: too little left for the next prompts. The budget refuses, naming itself.
    for (let i = 0; i < 2; i += 1) {
      const refused = await post(app, good);
      expect(refused.status).toBe(429);
      expect(refused.body.details).toEqual([
        { path: 'budget.user.daily.tokens', message: expect.any(String) },
      ]);
    }
    // The fourth hit is over the rate of 3: refused by the rate, which names no budget.
    const fourth = await post(app, good);
    expect(fourth.status).toBe(429);
    expect(fourth.body.details).toBeUndefined();
    expect(h.openaiRequests()).toHaveLength(1);
  });
});
