import request from 'supertest';
import { LanesConfigError, parseLanesConfig } from '../src/ai/config/lanes';
import {
  type AiHarness,
  PUBLIC_URL,
  startAiHarness,
  type TestCaller,
  writeTempJson,
} from './support/ai-harness';
import { modelsAsked, NATIVE_STREAM, OPENAI_COMPLETION } from './support/failover';

/**
 * Issue 27, item 6: an OpenAI-compatible provider added by configuration
 * alone (name, base URL, key variable) is usable in lanes (with its own
 * server key), for bring-your-own-key, and is listed for the console.
 */
const SERVER_KEY = 'sk-server-together-0007';
const ANSWER = 'Answered by a provider nobody coded.';

let h: AiHarness;
let url: string;
let caller: TestCaller;

function config(baseUrl: string) {
  return {
    providers: {
      together: {
        base_url: baseUrl,
        key_env: 'TOGETHER_API_KEY',
        label: 'Together AI',
        accepts_prefill: true,
      },
    },
    lanes: {
      open: {
        default_model: 'o-1',
        targets: [
          { provider: 'openai', model: 'o-1' },
          { provider: 'together', model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo' },
        ],
      },
    },
    media: {
      image: [{ provider: 'openai', model: 'dall-e-3' }],
      tts: [{ provider: 'openai', model: 'tts-1' }],
      music: [{ provider: 'elevenlabs', model: 'music_v1' }],
      soundfx: [{ provider: 'elevenlabs', model: 'sfx_v2' }],
    },
  };
}

beforeAll(async () => {
  h = await startAiHarness();
  const app = h.startInstance({
    AI_LANES_CONFIG: writeTempJson('open-lanes.json', config(h.openai.baseURL)),
    AI_ALLOWED_LANES: 'open',
    TOGETHER_API_KEY: SERVER_KEY,
  });
  url = (await h.listen(app)).url;
});
afterAll(() => h.close());
beforeEach(async () => {
  h.resetFakes();
  h.openai.set({ content: ANSWER });
  caller = await h.createCaller();
});

const together = (r: { model?: string }) => r.model === 'meta-llama/Llama-3.3-70B-Instruct-Turbo';

describe('a provider added by configuration', () => {
  it('serves a lane with the key from its key_env, as a fallback and as a stream continuation', async () => {
    h.openai.setFor('o-1', { status: 400, error: { code: 'context_length_exceeded', message: 'too long' } });
    const answer = await OPENAI_COMPLETION.send(url, caller, 'open');
    expect(answer).toMatchObject({ status: 200, text: ANSWER, complete: true });
    const upstream = h.openaiRequests().find(together);
    expect(upstream?.headers.authorization).toBe(`Bearer ${SERVER_KEY}`);

    // Its accepts_prefill (set on the provider) lets it finish a stream cut elsewhere.
    h.openai.setFor('o-1', { failAfterChunks: 2 });
    const streamed = await NATIVE_STREAM.send(url, caller, 'open');
    expect(streamed).toMatchObject({ status: 200, text: ANSWER, complete: true });
    expect(modelsAsked(h).slice(-2)).toEqual(['o-1', 'meta-llama/Llama-3.3-70B-Instruct-Turbo']);
  });

  it('takes a stored key (bring your own key), which is then used instead of the server key', async () => {
    const userKey = 'sk-user-together-4242';
    const stored = await request(url).post('/api/v1/keys').set('x-api-key', caller.apiKey).send({
      provider: 'together',
      key: userKey,
    });
    expect(stored.status).toBe(201);
    expect(stored.body).toMatchObject({ provider: 'together', last4: '4242' });
    const listed = await request(url).get('/api/v1/keys').set('x-api-key', caller.apiKey);
    expect(listed.body).toEqual([expect.objectContaining({ provider: 'together' })]);

    h.openai.setFor('o-1', { status: 503 });
    const answer = await OPENAI_COMPLETION.send(url, caller, 'open');
    expect(answer).toMatchObject({ status: 200, text: ANSWER });
    expect(h.openaiRequests().find(together)?.headers.authorization).toBe(`Bearer ${userKey}`);

    const gone = await request(url).delete('/api/v1/keys/together').set('x-api-key', caller.apiKey);
    expect(gone.status).toBe(204);
    // A provider that is neither built in nor configured stays unknown.
    const unknown = await request(url)
      .post('/api/v1/keys')
      .set('x-api-key', caller.apiKey)
      .send({ provider: 'fireworks', key: 'sk-1234567890' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([{ path: 'provider', message: 'unknown provider' }]);
  });

  it('is listed for the console with its label', async () => {
    const res = await request(url).get('/api/v1/config').set('Origin', PUBLIC_URL);
    expect(res.body.providers).toContainEqual({ provider: 'together', label: 'Together AI' });
    expect(res.body.providers[0]).toEqual({ provider: 'openai', label: 'OpenAI' });
  });

  it('must be declared with base_url and key_env before a lane may use it', () => {
    const bad = config('https://api.together.xyz/v1');
    const undeclared = { ...bad, providers: {} };
    expect(() => parseLanesConfig(undeclared, ['open'], 'test')).toThrow(
      /lanes\.open\.targets\.1\.provider: unknown provider together: add it under providers/,
    );
    const noKey = { ...bad, providers: { together: { base_url: 'https://api.together.xyz/v1' } } };
    expect(() => parseLanesConfig(noKey, ['open'], 'test')).toThrow(LanesConfigError);
    expect(() => parseLanesConfig(noKey, ['open'], 'test')).toThrow(/providers\.together\.key_env: required/);
    const badKeyName = {
      ...bad,
      providers: { together: { base_url: 'https://api.together.xyz/v1', key_env: 'PATH' } },
    };
    expect(() => parseLanesConfig(badKeyName, ['open'], 'test')).toThrow(/_API_KEY/);
  });
});
