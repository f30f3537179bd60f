import { createSilentMp3, TINY_PNG_BASE64 } from '@platform/testing';
import request from 'supertest';
import { type AiHarness, SERVER_KEYS, type TestCaller, useAiHarness } from './support/ai-harness';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: AiHarness;
let caller: TestCaller;
useAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '2000' }, (state) => {
  ({ h, caller } = state);
});

function post(path: string, body: unknown) {
  return request(h.app)
    .post(`/api/v1/ai/${path}`)
    .set('x-api-key', caller.apiKey)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    })
    .send(body as object);
}

function json(res: request.Response): Record<string, unknown> {
  return JSON.parse((res.body as Buffer).toString('utf8'));
}

function expectError(res: request.Response, status: number, error: string) {
  const body = json(res);
  expect({ status: res.status, error: body.error }).toEqual({ status, error });
  expect(body.request_id).toMatch(UUID);
}

describe('POST /api/v1/ai/image', () => {
  it('returns base64 PNG images as JSON', async () => {
    const res = await post('image', { prompt: 'a lighthouse', project_id: 'p1', n: 2 });
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({
      images: [
        { b64_json: TINY_PNG_BASE64, content_type: 'image/png' },
        { b64_json: TINY_PNG_BASE64, content_type: 'image/png' },
      ],
      model_used: 'dall-e-3',
    });
    const upstream = h.openaiRequests()[0];
    expect(upstream?.path).toBe('/v1/images/generations');
    expect(upstream?.body).toMatchObject({
      model: 'dall-e-3',
      prompt: 'a lighthouse',
      n: 2,
      response_format: 'b64_json',
    });
    expect(upstream?.headers.authorization).toBe(`Bearer ${SERVER_KEYS.OPENAI_API_KEY}`);
  });

  it('falls back to the next image target on a 503', async () => {
    h.openai.setFor('dall-e-3', { status: 503 });
    const res = await post('image', { prompt: 'x', project_id: 'p1' });
    expect(res.status).toBe(200);
    expect(json(res).model_used).toBe('img-2');
  });

  it.each([
    ['prompt missing', { project_id: 'p' }, 422, 'deserialization error'],
    ['project_id missing', { prompt: 'x' }, 422, 'deserialization error'],
    ['empty prompt', { prompt: '', project_id: 'p' }, 400, 'validation failed'],
    ['unsupported size', { prompt: 'x', project_id: 'p', size: '10x10' }, 400, 'validation failed'],
    ['too many images', { prompt: 'x', project_id: 'p', n: 9 }, 400, 'validation failed'],
    ['unknown lane', { prompt: 'x', project_id: 'p', lane: 'turbo' }, 400, 'unknown lane'],
    [
      'model not offered',
      { prompt: 'x', project_id: 'p', model: 'tts-1' },
      400,
      'model is not offered by this lane',
    ],
  ])('%s -> %i %s', async (_name, body, status, error) => {
    expectError(await post('image', body), status, error);
    expect(h.openaiRequests()).toHaveLength(0);
  });
});

describe('POST /api/v1/ai/tts', () => {
  it('returns mp3 bytes by default', async () => {
    const res = await post('tts', { text: 'hello', project_id: 'p1' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(res.headers['x-model-used']).toBe('tts-1');
    expect((res.body as Buffer).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfb]));
    expect(h.openaiRequests()[0]?.body).toMatchObject({ model: 'tts-1', input: 'hello', voice: 'alloy' });
  });

  it('returns the requested format with its content type', async () => {
    const res = await post('tts', { text: 'hello', project_id: 'p1', format: 'wav', voice: 'nova' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/wav');
    expect((res.body as Buffer).subarray(0, 4).toString('ascii')).toBe('RIFF');
  });

  it.each([
    ['text missing', { project_id: 'p' }, 422, 'deserialization error'],
    ['unknown format', { text: 'x', project_id: 'p', format: 'ogg' }, 400, 'validation failed'],
    ['speed out of range', { text: 'x', project_id: 'p', speed: 10 }, 400, 'validation failed'],
    ['text too long', { text: 'x'.repeat(4097), project_id: 'p' }, 400, 'validation failed'],
  ])('%s -> %i %s', async (_name, body, status, error) => {
    expectError(await post('tts', body), status, error);
  });

  it('504 when the provider does not answer in time', async () => {
    h.openai.set({ hang: true });
    expectError(await post('tts', { text: 'x', project_id: 'p' }), 504, 'upstream AI service timed out');
  });
});

describe('POST /api/v1/ai/music', () => {
  it('returns audio/mpeg bytes from ElevenLabs', async () => {
    const res = await post('music', { prompt: 'calm piano', project_id: 'p1', duration_seconds: 12 });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(res.body).toEqual(createSilentMp3());
    const upstream = h.elevenlabsRequests()[0];
    expect(upstream?.path).toBe('/v1/music');
    expect(upstream?.headers['xi-api-key']).toBe(SERVER_KEYS.ELEVENLABS_API_KEY);
    expect(upstream?.body).toEqual({ prompt: 'calm piano', music_length_ms: 12_000, model_id: 'music_v1' });
  });

  it.each([
    ['prompt missing', { project_id: 'p' }, 422, 'deserialization error'],
    ['too short', { prompt: 'x', project_id: 'p', duration_seconds: 1 }, 400, 'validation failed'],
    [
      'duration not a number',
      { prompt: 'x', project_id: 'p', duration_seconds: '10' },
      422,
      'deserialization error',
    ],
  ])('%s -> %i %s', async (_name, body, status, error) => {
    expectError(await post('music', body), status, error);
    expect(h.elevenlabsRequests()).toHaveLength(0);
  });

  it('an upstream 429 with no target left -> 429 rate_limited with its Retry-After', async () => {
    h.elevenlabs.set({ status: 429, retryAfter: 9 });
    const res = await post('music', { prompt: 'x', project_id: 'p' });
    expectError(res, 429, 'rate_limited');
    expect(res.headers['retry-after']).toBe('9');
  });
});

describe('POST /api/v1/ai/soundfx', () => {
  it('returns audio/mpeg bytes from ElevenLabs', async () => {
    const res = await post('soundfx', { prompt: 'door creaks', project_id: 'p1', duration_seconds: 2 });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(res.headers['x-model-used']).toBe('sfx_v2');
    expect(res.body).toEqual(createSilentMp3());
    expect(h.elevenlabsRequests()[0]?.path).toBe('/v1/sound-generation');
    expect(h.elevenlabsRequests()[0]?.body).toEqual({
      text: 'door creaks',
      model_id: 'sfx_v2',
      duration_seconds: 2,
    });
  });

  it.each([
    ['prompt missing', { project_id: 'p' }, 422, 'deserialization error'],
    ['too long', { prompt: 'x', project_id: 'p', duration_seconds: 30 }, 400, 'validation failed'],
    ['empty project_id', { prompt: 'x', project_id: '' }, 400, 'project_id is required'],
    ['empty lane', { prompt: 'x', project_id: 'p', lane: '' }, 400, 'lane is required'],
    [
      'project_id over 128 characters',
      { prompt: 'x', project_id: 'p'.repeat(129) },
      400,
      'project_id exceeds 128 characters',
    ],
  ])('%s -> %i %s', async (_name, body, status, error) => {
    expectError(await post('soundfx', body), status, error);
  });

  it('a request the provider refuses (422) is not retried and answers 400', async () => {
    h.elevenlabs.set({ status: 422 });
    expectError(
      await post('soundfx', { prompt: 'x', project_id: 'p' }),
      400,
      'upstream AI service rejected the request',
    );
  });

  it('needs an API key', async () => {
    const res = await request(h.app).post('/api/v1/ai/soundfx').send({ prompt: 'x', project_id: 'p' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('missing api key');
  });
});
