import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { parseSse } from './support/sse';

let h: AiHarness;
let caller: TestCaller;
let url: string;
useAiHarness(
  {},
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

  it('a project_id with NUL is refused at the edge (400), and the other requests are recorded', async () => {
    expect((await chat('ok-project')).status).toBe(200);
    const bad = await chat('bad\u0000project');
    expect([bad.status, bad.body.error]).toEqual([400, 'validation failed']);
    const rows = await rowsOf(caller.userId);
    expect(rows.map((r) => r.projectId)).toEqual(['ok-project']);
  });

  it('project_ids that look like array or SQL syntax are stored exactly as sent, in order', async () => {
    // The batch goes in as JSON text, parsed by Postgres: each of these must come back as itself, not as NULL or split.
    const projects = ['NULL', 'a,b', '{x}', 'say "hi"', 'back\\slash', "it's", ' padded '];
    for (const p of projects) expect((await chat(p)).status).toBe(200);
    const rows = await rowsOf(caller.userId);
    expect(rows.map((r) => r.projectId)).toEqual(projects);
  });

  it('a usage query for a project_id with NUL is refused with 400, not 500', async () => {
    const res = await request(h.app)
      .get(`/api/v1/usage?from=${today()}&to=${today()}&project_id=%00`)
      .set('x-api-key', caller.apiKey);
    expect([res.status, res.body.error]).toEqual([400, 'validation failed']);
  });

  it('a request is recorded exactly once, with its cost at the price of the target that answered', async () => {
    h.openai.set({ usage: { prompt_tokens: 5, completion_tokens: 7 } });
    const res = await chat();
    const rows = await rowsOf(caller.userId);
    expect(rows).toHaveLength(1);
    // groq/free-a: 1 micro-unit per prompt token, 2 per completion token.
    expect(rows[0]).toEqual(
      expect.objectContaining({
        requestId: res.headers['x-request-id'],
        costMicros: 19n,
        currency: 'USD',
        estimated: false,
        byok: false,
      }),
    );
  });

  it('a client-chosen x-request-id used twice is recorded twice (a fresh ledger id), not served free', async () => {
    const id = '0b7c4e5e-8a39-4d8e-9a55-1d7f3a0e6b11';
    const send = () => chat().set('x-request-id', `${id}`);
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const rows = await rowsOf(caller.userId);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.requestId)).size).toBe(2);
  });

  it('a failed request is recorded with its status and the last target tried', async () => {
    h.openai.set({ status: 500 });
    const res = await chat();
    expect(res.status).toBe(502);
    expect(await rowsOf(caller.userId)).toEqual([
      expect.objectContaining({ status: 502, provider: 'google', model: 'free-c', totalTokens: 0 }),
    ]);
  });

  it('a streamed request is recorded with the usage of its done event; a broken stream as an error, charged an estimate', async () => {
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
    // The broken stream went on by instruction at the lane's two other targets, which broke too:
    // the record names the last, is marked continued, and charges every segment.
    expect(
      rows.map((r) => [r.endpoint, r.status, r.projectId, r.provider, r.estimated, r.continued]),
    ).toEqual([
      ['stream', 200, 'proj-s', 'groq', false, false],
      ['stream', 502, 'proj-s', 'google', true, true],
    ]);
    expect(rows[0]?.totalTokens).toBe(5);
    // The prompt ("hi" and the chat framing) and the one chunk each target generated, by the tokenizer.
    expect(rows[1]?.completionTokens).toBe(3);
    expect(rows[1]?.promptTokens).toBeGreaterThan(1);
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
          cached_tokens: 0,
          errors: 0,
          cost_micros: 10,
          byok_cost_micros: 0,
          currency: 'USD',
          models: [
            {
              lane: 'free',
              model: 'free-a',
              provider: 'groq',
              requests: 2,
              total_tokens: 6,
              cost_micros: 10,
            },
          ],
          keys: [{ api_key_id: caller.apiKeyId, requests: 2, total_tokens: 6, cost_micros: 10 }],
        },
        {
          project_id: 'beta',
          day,
          requests: 2,
          prompt_tokens: 1,
          completion_tokens: 2,
          total_tokens: 3,
          cached_tokens: 0,
          errors: 1,
          cost_micros: 5,
          byok_cost_micros: 0,
          currency: 'USD',
          // The failed request is recorded with the last target it tried; most tokens first.
          models: [
            { lane: 'free', model: 'free-a', provider: 'groq', requests: 1, total_tokens: 3, cost_micros: 5 },
            {
              lane: 'free',
              model: 'free-c',
              provider: 'google',
              requests: 1,
              total_tokens: 0,
              cost_micros: 0,
            },
          ],
          keys: [{ api_key_id: caller.apiKeyId, requests: 2, total_tokens: 3, cost_micros: 5 }],
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
    // Without from/to: the last 30 days (today and the 29 before, UTC), not 422.
    const lastDays = await request(h.app).get('/api/v1/usage').set('x-api-key', caller.apiKey);
    expect(lastDays.status).toBe(200);
    expect(lastDays.body).toEqual(expected);
    // `to` alone: the 30 days up to it.
    const upTo = await request(h.app).get(`/api/v1/usage?to=${day}`).set('x-api-key', caller.apiKey);
    expect(upTo.body).toEqual(expected);
    const before = new Date(Date.parse(`${day}T00:00:00Z`) - 30 * 86_400_000).toISOString().slice(0, 10);
    const older = await request(h.app).get(`/api/v1/usage?to=${before}`).set('x-api-key', caller.apiKey);
    expect(older.body).toEqual({ usage: [] });
  });

  it.each([
    ['from after to', '?from=2026-02-01&to=2026-01-01', 400, 'validation failed'],
    ['a range over 366 days', '?from=2024-01-01&to=2026-01-01', 400, 'validation failed'],
    ['not a date', '?from=yesterday&to=2026-01-01', 400, 'validation failed'],
    ['a lone from over 366 days back', '?from=2020-01-01', 400, 'validation failed'],
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
