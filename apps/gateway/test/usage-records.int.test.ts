import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { parseSse } from './support/sse';

let h: AiHarness;
let caller: TestCaller;
let url: string;
useAiHarness(
  { AI_UPSTREAM_TIMEOUT_MS: '400' },
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

const messages = [{ role: 'user', content: 'hi' }];

function chat(project = 'proj-u') {
  return request(h.app)
    .post('/api/v1/ai/chat/completions')
    .set('x-api-key', caller.apiKey)
    .send({ lane: 'free', project_id: project, messages });
}

async function rowsOf(userId: string) {
  await h.usage.flush();
  return h.prisma.usageRecord.findMany({ where: { userId }, orderBy: { id: 'asc' } });
}

const today = () => new Date().toISOString().slice(0, 10);

describe('usage records', () => {
  it('a completed request is recorded with tokens, provider, model, lane, project, latency, status and request id', async () => {
    h.openai.set({ usage: { prompt_tokens: 5, completion_tokens: 7 } });
    const res = await chat();
    expect(res.status).toBe(200);
    const rows = await rowsOf(caller.userId);
    expect(rows).toEqual([
      expect.objectContaining({
        requestId: res.headers['x-request-id'],
        apiKeyId: caller.apiKeyId,
        projectId: 'proj-u',
        endpoint: 'chat',
        lane: 'free',
        provider: 'groq',
        model: 'free-a',
        status: 200,
        promptTokens: 5,
        completionTokens: 7,
        totalTokens: 12,
      }),
    ]);
    expect(rows[0]?.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('a project_id with NUL is recorded too, and does not take the other rows of its batch with it', async () => {
    expect((await chat('ok-project')).status).toBe(200);
    expect((await chat('bad\u0000project')).status).toBe(200);
    const rows = await rowsOf(caller.userId);
    expect(rows.map((r) => r.projectId)).toEqual(['ok-project', 'bad\ufffdproject']);
  });

  it('a usage query for a project_id with NUL is answered, not 500', async () => {
    const res = await request(h.app)
      .get(`/api/v1/usage?from=${today()}&to=${today()}&project_id=%00`)
      .set('x-api-key', caller.apiKey);
    expect(res.status).toBe(200);
  });

  it('rows are written in batches, not during the request', async () => {
    await chat();
    expect(await h.prisma.usageRecord.count({ where: { userId: caller.userId } })).toBe(0);
    expect(await rowsOf(caller.userId)).toHaveLength(1);
  });

  it('a failed request is recorded with its status and the last target tried', async () => {
    h.openai.set({ status: 500 });
    const res = await chat();
    expect(res.status).toBe(502);
    expect(await rowsOf(caller.userId)).toEqual([
      expect.objectContaining({ status: 502, provider: 'google', model: 'free-c', totalTokens: 0 }),
    ]);
  });

  it('a streamed request is recorded with the usage of its done event; a broken stream as an error', async () => {
    h.openai.set({ chunks: ['a', 'b'], usage: { prompt_tokens: 2, completion_tokens: 3 } });
    const send = () =>
      fetch(`${url}/api/v1/ai/chat/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
        body: JSON.stringify({ lane: 'free', project_id: 'proj-s', messages }),
      }).then((r) => r.text());
    expect(parseSse(await send()).events.at(-1)?.event).toBe('done');
    h.openai.set({ chunks: ['a', 'b', 'c'], failAfterChunks: 1 });
    expect(parseSse(await send()).events.at(-1)?.event).toBe('error');
    const rows = await rowsOf(caller.userId);
    expect(rows.map((r) => [r.endpoint, r.status, r.projectId, r.provider, r.totalTokens])).toEqual([
      ['stream', 200, 'proj-s', 'groq', 5],
      ['stream', 502, 'proj-s', 'groq', 0],
    ]);
  });

  it('media requests are recorded too', async () => {
    const res = await request(h.app)
      .post('/api/v1/ai/tts')
      .set('x-api-key', caller.apiKey)
      .send({ text: 'hi', project_id: 'proj-m' });
    expect(res.status).toBe(200);
    expect(await rowsOf(caller.userId)).toEqual([
      expect.objectContaining({
        endpoint: 'tts',
        status: 200,
        provider: 'openai',
        model: 'tts-1',
        lane: null,
      }),
    ]);
  });
});

describe('GET /api/v1/usage', () => {
  it('summarises per project and day, split by lane and model, for a key or a session', async () => {
    h.openai.set({ usage: { prompt_tokens: 1, completion_tokens: 2 } });
    await chat('alpha');
    await chat('alpha');
    await chat('beta');
    h.openai.set({ status: 500 });
    await chat('beta');
    await h.usage.flush();

    const day = today();
    const expected = {
      usage: [
        {
          project_id: 'alpha',
          day,
          requests: 2,
          prompt_tokens: 2,
          completion_tokens: 4,
          total_tokens: 6,
          errors: 0,
          models: [{ lane: 'free', model: 'free-a', requests: 2, total_tokens: 6 }],
        },
        {
          project_id: 'beta',
          day,
          requests: 2,
          prompt_tokens: 1,
          completion_tokens: 2,
          total_tokens: 3,
          errors: 1,
          // The failed request is recorded with the last target it tried; most tokens first.
          models: [
            { lane: 'free', model: 'free-a', requests: 1, total_tokens: 3 },
            { lane: 'free', model: 'free-c', requests: 1, total_tokens: 0 },
          ],
        },
      ],
    };
    const byKey = await request(h.app)
      .get(`/api/v1/usage?from=${day}&to=${day}`)
      .set('x-api-key', caller.apiKey);
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual(expected);
    const bySession = await request(h.app)
      .get(`/api/v1/usage?from=${day}&to=${day}`)
      .set('Cookie', caller.cookie);
    expect(bySession.body).toEqual(expected);
    const oneProject = await request(h.app)
      .get(`/api/v1/usage?from=${day}&to=${day}&project_id=beta`)
      .set('x-api-key', caller.apiKey);
    expect(oneProject.body.usage.map((r: { project_id: string }) => r.project_id)).toEqual(['beta']);
    const other = await h.createCaller();
    const empty = await request(h.app)
      .get(`/api/v1/usage?from=${day}&to=${day}`)
      .set('x-api-key', other.apiKey);
    expect(empty.body).toEqual({ usage: [] });
  });

  it.each([
    ['from after to', '?from=2026-02-01&to=2026-01-01', 400, 'validation failed'],
    ['a range over 366 days', '?from=2024-01-01&to=2026-01-01', 400, 'validation failed'],
    ['not a date', '?from=yesterday&to=2026-01-01', 400, 'validation failed'],
    ['missing bounds', '', 422, 'deserialization error'],
  ])('%s -> %i %s', async (_name, query, status, error) => {
    const res = await request(h.app).get(`/api/v1/usage${query}`).set('x-api-key', caller.apiKey);
    expect({ status: res.status, error: res.body.error }).toEqual({ status, error });
  });

  it('needs a session or a key', async () => {
    const res = await request(h.app).get('/api/v1/usage?from=2026-01-01&to=2026-01-01');
    expect({ status: res.status, error: res.body.error }).toEqual({
      status: 401,
      error: 'missing_authentication',
    });
  });
});
