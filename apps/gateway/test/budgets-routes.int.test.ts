import request from 'supertest';
import { createApiKey } from '../src/api-keys/create-api-key';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

// Issue 31 item 3: budgets set through the API. A budget set mid-window
// starts from the window's use so far (the daily sums), because requests
// count only the budgets in force.

let h: AiHarness;
let caller: TestCaller;
useAiHarness({}, (state) => {
  ({ h, caller } = state);
});

const chat = (projectId: string, apiKey = caller.apiKey) =>
  request(h.app)
    .post('/api/v1/ai/chat/completions')
    .set('x-api-key', apiKey)
    .send({
      lane: 'free',
      project_id: projectId,
      max_tokens: 4,
      messages: [{ role: 'user', content: 'hi' }],
    });

const setBudget = (body: object) =>
  request(h.app).put('/api/v1/budgets').set('x-api-key', caller.apiKey).send(body);

describe('budgets API', () => {
  it('a project budget set mid-day starts from what the project used today, and then refuses', async () => {
    h.openai.set({ usage: { prompt_tokens: 10, completion_tokens: 5 } });
    for (let i = 0; i < 3; i += 1) expect((await chat('alpha')).status).toBe(200);
    expect((await chat('beta')).status).toBe(200);
    await h.usage.flush();

    const set = await setBudget({
      scope: 'project',
      subject: 'alpha',
      period: 'daily',
      unit: 'tokens',
      limit: 60,
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      scope: 'project',
      subject: 'alpha',
      limit: 60,
      used: 45,
      source: 'user',
    });

    // 45 used: one more answer of 15 fits, then the project is spent; beta is not limited.
    expect((await chat('alpha')).status).toBe(200);
    const refused = await chat('alpha');
    expect(refused.status).toBe(429);
    expect(refused.body.details).toEqual([
      {
        path: 'budget.project.daily.tokens',
        message: 'daily tokens budget of project alpha (60 tokens) is spent',
      },
    ]);
    expect((await chat('beta')).status).toBe(200);

    const listed = await request(h.app).get('/api/v1/budgets').set('x-api-key', caller.apiKey);
    expect(listed.body.budgets).toContainEqual(
      expect.objectContaining({ scope: 'project', subject: 'alpha', used: 60, limit: 60 }),
    );
  });

  it('changing a limit in force keeps its count; removing and setting again counts afresh from the sums', async () => {
    h.openai.set({ usage: { prompt_tokens: 4, completion_tokens: 4 } });
    const key = await createApiKey(h.deps, { userId: caller.userId, name: 'second', scope: 'ai' });
    const id = { scope: 'api_key', subject: key.key_id, period: 'monthly', unit: 'tokens' };
    expect((await chat('p', key.key)).status).toBe(200);
    await h.usage.flush();
    const first = await setBudget({ ...id, limit: 1000 });
    expect(first.body).toMatchObject({ used: 8 });
    expect((await chat('p', key.key)).status).toBe(200);
    expect((await setBudget({ ...id, limit: 500 })).body.used).toBe(16);

    const removed = await request(h.app).delete('/api/v1/budgets').query(id).set('x-api-key', caller.apiKey);
    expect(removed.status).toBe(204);
    // Not counted while removed; set again, it starts from the sums (all three answers).
    expect((await chat('p', key.key)).status).toBe(200);
    await h.usage.flush();
    expect((await setBudget({ ...id, limit: 500 })).body.used).toBe(24);
    const again = await request(h.app).delete('/api/v1/budgets').query(id).set('x-api-key', caller.apiKey);
    expect(again.status).toBe(204);
    const gone = await request(h.app).delete('/api/v1/budgets').query(id).set('x-api-key', caller.apiKey);
    expect(gone.status).toBe(404);
  });

  it("a budget can only name the caller's own API key", async () => {
    const other = await h.createCaller();
    const res = await setBudget({
      scope: 'api_key',
      subject: other.apiKeyId,
      period: 'daily',
      unit: 'cost',
      limit: 1,
    });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'api_key_not_found', error: 'api key not found' });
  });
});
