import { type ElevenLabsFake, startElevenLabsFake } from '../src/elevenlabs-fake';

let fake: ElevenLabsFake;

beforeEach(async () => {
  fake = await startElevenLabsFake({ apiKeys: ['xi-good'] });
});
afterEach(() => fake.close());

function post(path: string, body: unknown, init: { key?: string | null; signal?: AbortSignal } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key !== null) headers['xi-api-key'] = init.key ?? 'xi-good';
  return fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

test('music, sound effects and text-to-speech return audio/mpeg bytes', async () => {
  const music = await post('/v1/music', { prompt: 'lo-fi beat', music_length_ms: 10_000 });
  const sfx = await post('/v1/sound-generation', {
    text: 'door creak',
    duration_seconds: 2,
    prompt_influence: 0.3,
  });
  const tts = await post('/v1/text-to-speech/voice123?output_format=mp3_44100_128', { text: 'hello' });
  for (const response of [music, sfx, tts]) {
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfb]));
  }
  expect(fake.requests.map((r) => r.path)).toEqual([
    '/v1/music',
    '/v1/sound-generation',
    '/v1/text-to-speech/voice123',
  ]);
  expect(fake.requests[2]?.model).toBe('voice123');
  expect(fake.requests[0]?.headers['xi-api-key']).toBe('xi-good');
});

test('a missing or wrong xi-api-key is a 401', async () => {
  const missing = await post('/v1/music', { prompt: 'x' }, { key: null });
  expect(missing.status).toBe(401);
  const wrong = await post('/v1/music', { prompt: 'x' }, { key: 'xi-bad' });
  expect(wrong.status).toBe(401);
  expect(await wrong.json()).toEqual({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
});

test('out-of-range parameters are a 422 naming the field', async () => {
  const response = await post('/v1/sound-generation', { text: 'boom', duration_seconds: 45 });
  expect(response.status).toBe(422);
  const body = (await response.json()) as { detail: Array<{ loc: string[] }> };
  expect(body.detail[0]?.loc).toEqual(['body', 'duration_seconds']);
  const noPrompt = await post('/v1/music', { music_length_ms: 10_000 });
  expect(noPrompt.status).toBe(422);
});

test('a per-endpoint status knob applies only to that endpoint', async () => {
  fake.setFor('music', { status: 429 });
  const limited = await post('/v1/music', { prompt: 'x' });
  expect(limited.status).toBe(429);
  expect(limited.headers.get('retry-after')).toBe('1');
  expect(await limited.json()).toMatchObject({ detail: { status: 'too_many_concurrent_requests' } });
  expect((await post('/v1/sound-generation', { text: 'ok' })).status).toBe(200);
});

test('a hang is released by the client aborting, and the abort is recorded', async () => {
  fake.enqueue({ hang: true });
  const controller = new AbortController();
  const call = post('/v1/text-to-speech/v1', { text: 'hi' }, { signal: controller.signal });
  await fake.waitForRequest();
  controller.abort();
  await expect(call).rejects.toThrow();
  const aborted = await fake.waitForAbort();
  expect(aborted.path).toBe('/v1/text-to-speech/v1');
});
