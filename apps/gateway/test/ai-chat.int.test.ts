import request from 'supertest';
import {
  type AiHarness,
  baseUrlsFor,
  SERVER_KEYS,
  type TestCaller,
  useAiHarness,
} from './support/ai-harness';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KIB64 = 64 * 1024;

let h: AiHarness;
let caller: TestCaller;
useAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '1500' }, (state) => {
  ({ h, caller } = state);
});

const user = (content: string) => ({ role: 'user', content });
const valid = { lane: 'free', project_id: 'proj-1', messages: [user('hi')] };

function chat(body: unknown) {
  return request(h.app)
    .post('/api/v1/ai/chat/completions')
    .set('x-api-key', caller.apiKey)
    .send(body as object);
}

function expectError(res: request.Response, status: number, error: string) {
  expect({ status: res.status, error: res.body.error }).toEqual({ status, error });
  expect(res.body.request_id).toMatch(UUID);
  expect(res.headers['x-request-id']).toBe(res.body.request_id);
}

describe('POST /api/v1/ai/chat/completions validation (spec error table)', () => {
  it('empty messages -> 400 messages cannot be empty', async () => {
    expectError(await chat({ ...valid, messages: [] }), 400, 'messages cannot be empty');
  });

  it('one message over 64 KiB of UTF-8 -> 400 message content exceeds maximum length', async () => {
    // 32769 two-byte characters: under 64 Ki characters but over 64 KiB of bytes.
    const res = await chat({ ...valid, messages: [user('é'.repeat(KIB64 / 2 + 1))] });
    expectError(res, 400, 'message content exceeds maximum length');
  });

  it('a message of exactly 64 KiB is accepted', async () => {
    const res = await chat({ ...valid, messages: [user('a'.repeat(KIB64))] });
    expect(res.status).toBe(200);
  });

  it('all contents over 8 MiB -> 400 total message content exceeds 8MB limit (not a body-parser 413)', async () => {
    const messages = Array.from({ length: 129 }, () => user('a'.repeat(KIB64)));
    expectError(await chat({ ...valid, messages }), 400, 'total message content exceeds 8MB limit');
  });

  it.each([
    ['missing', { project_id: 'p', messages: [user('x')] }],
    ['empty', { lane: '', project_id: 'p', messages: [user('x')] }],
  ])('lane %s -> 400 lane is required', async (_name, body) => {
    expectError(await chat(body), 400, 'lane is required');
  });

  it('empty project_id -> 400 project_id is required', async () => {
    expectError(await chat({ ...valid, project_id: '' }), 400, 'project_id is required');
  });

  it('project_id omitted -> 422 deserialization error', async () => {
    expectError(await chat({ lane: 'free', messages: [user('x')] }), 422, 'deserialization error');
  });

  it('malformed JSON -> 422 deserialization error', async () => {
    const res = await request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .set('Content-Type', 'application/json')
      .send('{"lane": "free", "project_id": ');
    expectError(res, 422, 'deserialization error');
  });

  it.each([
    ['messages not an array', { ...valid, messages: 'hi' }],
    ['content not a string', { ...valid, messages: [{ role: 'user', content: 5 }] }],
    ['max_tokens a string', { ...valid, max_tokens: '10' }],
    ['lane a number', { ...valid, lane: 3 }],
    ['unknown role', { ...valid, messages: [{ role: 'tool', content: 'x' }] }],
  ])('%s -> 422 deserialization error', async (_name, body) => {
    expectError(await chat(body), 422, 'deserialization error');
  });

  it('lane not allowed -> 400 unknown lane', async () => {
    expectError(await chat({ ...valid, lane: 'turbo' }), 400, 'unknown lane');
  });

  it('project_id over 128 characters -> 400', async () => {
    expectError(
      await chat({ ...valid, project_id: 'p'.repeat(129) }),
      400,
      'project_id exceeds 128 characters',
    );
  });

  it('more than 128 messages -> 400', async () => {
    const messages = Array.from({ length: 129 }, () => user('x'));
    expectError(await chat({ ...valid, messages }), 400, 'messages exceeds 128 entries');
  });

  it('a model the lane does not offer -> 400 unknown model', async () => {
    expectError(await chat({ ...valid, model: 'std-1' }), 400, 'model is not offered by this lane');
  });

  it('no x-api-key -> 401 missing api key, before the body is read', async () => {
    const res = await request(h.app).post('/api/v1/ai/chat/completions').send(valid);
    expectError(res, 401, 'missing api key');
  });

  it('no upstream call happens for a refused request', async () => {
    await chat({ ...valid, messages: [] });
    expect(h.openaiRequests()).toHaveLength(0);
  });
});

describe('POST /api/v1/ai/chat/completions upstream', () => {
  it('answers with content, model_used, finish_reason and usage; max_tokens defaults to 4096', async () => {
    h.openai.set({ content: 'Hello there', usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const res = await chat(valid);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: 'Hello there',
      model_used: 'free-a',
      finish_reason: 'stop',
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
    // res.json's headers, less the ETag a POST answer has no use for (sendJson).
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(res.headers.etag).toBeUndefined();
    const upstream = h.openaiRequests()[0];
    expect(upstream?.body).toMatchObject({ model: 'free-a', max_tokens: 4096, messages: [user('hi')] });
    expect(upstream?.headers.authorization).toBe(`Bearer ${SERVER_KEYS.GROQ_API_KEY}`);
  });

  it('uses the requested model of the lane', async () => {
    const res = await chat({ ...valid, lane: 'standard', model: 'std-2' });
    expect(res.status).toBe(200);
    expect(res.body.model_used).toBe('std-2');
    expect(h.openaiRequests().map((r) => r.model)).toEqual(['std-2']);
  });

  it('falls back in order: 503, then a hang past the timeout, then the third target answers', async () => {
    h.openai.setFor('free-a', { status: 503 });
    h.openai.setFor('free-b', { hang: true });
    h.openai.setFor('free-c', { content: 'third' });
    const res = await chat(valid);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ content: 'third', model_used: 'free-c' });
    // The 503 is retried once on the same target; the hang is not (issue 27).
    expect(h.openaiRequests().map((r) => [r.model, r.headers.authorization])).toEqual([
      ['free-a', `Bearer ${SERVER_KEYS.GROQ_API_KEY}`],
      ['free-a', `Bearer ${SERVER_KEYS.GROQ_API_KEY}`],
      ['free-b', `Bearer ${SERVER_KEYS.CEREBRAS_API_KEY}`],
      ['free-c', `Bearer ${SERVER_KEYS.GOOGLE_API_KEY}`],
    ]);
    // The hung attempt was cancelled, not left open.
    await h.waitForOpenaiAbort((r) => r.model === 'free-b');
    const lines = h.logs.lines.map((l) => JSON.parse(l));
    // Failed attempts get a warn line each; the success is on the request's one access-log line.
    const failures = lines.filter((l) => l.msg === 'upstream attempt failed');
    expect(failures.slice(-2).map((l) => [l.provider, l.outcome, l.status, typeof l.latency_ms])).toEqual([
      ['groq', 'server_error', 503, 'number'],
      ['cerebras', 'timeout', null, 'number'],
    ]);
    const access = lines.filter((l) => l.msg === 'request completed').at(-1);
    expect(access).toMatchObject({
      provider: 'google',
      model: 'free-c',
      // Three targets, the first tried twice (its 503 retried once).
      attempts: 4,
      res: { statusCode: 200 },
    });
    expect(typeof access.upstream_ms).toBe('number');
    expect(access.req).not.toHaveProperty('headers');
  });

  it.each([429, 500, 502])('falls back on a %i', async (status) => {
    h.openai.setFor('free-a', { status });
    const res = await chat(valid);
    expect(res.status).toBe(200);
    expect(res.body.model_used).toBe('free-b');
  });

  it('falls back on a connection error', async () => {
    // Port 1 on loopback refuses connections.
    const baseUrls = baseUrlsFor(h.openai.baseURL, h.elevenlabs.url, { groq: 'http://127.0.0.1:1/v1' });
    const res = await request(h.startInstance({ AI_PROVIDER_BASE_URLS: baseUrls }))
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send(valid);
    expect(res.status).toBe(200);
    expect(res.body.model_used).toBe('free-b');
  });

  it('does not fall back when the provider refuses the request itself (400)', async () => {
    h.openai.setFor('free-a', { status: 400 });
    expectError(await chat(valid), 400, 'upstream AI service rejected the request');
    expect(h.openaiRequests()).toHaveLength(1);
  });

  it('504 upstream AI service timed out when every target times out', async () => {
    h.openai.set({ hang: true });
    expectError(await chat(valid), 504, 'upstream AI service timed out');
    expect(h.openaiRequests().map((r) => r.model)).toEqual(['free-a', 'free-b', 'free-c']);
  });

  it('502 when every target fails with a server error', async () => {
    h.openai.set({ status: 500 });
    expectError(await chat(valid), 502, 'upstream AI service error');
  });

  it('a client that disconnects aborts the upstream request', async () => {
    h.openai.set({ hang: true });
    // A long upstream timeout, so only the disconnect can explain the abort the fake sees.
    const { url } = await h.listen(h.startInstance({ AI_UPSTREAM_TIMEOUT_MS: '60000' }));
    const controller = new AbortController();
    const pending = fetch(`${url}/api/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({ ...valid, lane: 'premium' }),
      signal: controller.signal,
    }).catch((err: unknown) => err);
    await h.waitForOpenaiRequest((r) => r.model === 'prem-1');
    controller.abort();
    const aborted = await h.waitForOpenaiAbort((r) => r.model === 'prem-1');
    expect(aborted.aborted).toBe(true);
    expect(await pending).toMatchObject({ name: 'AbortError' });
  });
});
