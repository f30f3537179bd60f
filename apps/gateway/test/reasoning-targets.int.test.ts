import { type AiHarness, type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';

// Issue 38: requests translated to OpenAI reasoning models sent `max_tokens`,
// which those models refuse. A target with `reasoning_model: true` gets
// `max_completion_tokens` (and a translated `reasoning_effort`); others keep
// what the client sent.

let h: AiHarness;
let url: string;
let caller: TestCaller;

const base = lanesConfig(
  { thinker: ['openrouter:o-fake'], plain: ['openrouter:gpt-plain'] },
  {
    image: ['openai:dall-e-3'],
    tts: ['openai:tts-1'],
    music: ['elevenlabs:music_v1'],
    soundfx: ['elevenlabs:sfx_v2'],
  },
);
const LANES = {
  ...base,
  lanes: {
    ...base.lanes,
    thinker: {
      default_model: 'o-fake',
      targets: [{ provider: 'openrouter', model: 'o-fake', reasoning_model: true }],
    },
  },
};

useAiHarness(
  () => ({ AI_LANES_CONFIG: writeTempJson('lanes.json', LANES), AI_ALLOWED_LANES: 'thinker,plain' }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

type Json = Record<string, unknown>;

async function post(route: string, body: unknown): Promise<{ status: number; dropped: string | null }> {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.apiKey}` },
    body: JSON.stringify(body),
  });
  await res.text();
  return { status: res.status, dropped: res.headers.get('x-gateway-dropped-params') };
}

function lastBody(): Json {
  return h.openaiRequests().at(-1)?.body as Json;
}

const hi = [{ role: 'user', content: 'hi' }];

describe('reasoning-model targets', () => {
  it('chat max_tokens reaches a reasoning model as max_completion_tokens, others as sent', async () => {
    expect(
      (await post('/v1/chat/completions', { model: 'thinker', messages: hi, max_tokens: 99 })).status,
    ).toBe(200);
    expect(lastBody()).toMatchObject({ model: 'o-fake', max_completion_tokens: 99 });
    expect(lastBody()).not.toHaveProperty('max_tokens');

    await post('/v1/chat/completions', { model: 'plain', messages: hi, max_tokens: 99 });
    expect(lastBody()).toMatchObject({ model: 'gpt-plain', max_tokens: 99 });
    expect(lastBody()).not.toHaveProperty('max_completion_tokens');
  });

  it('native chat max_tokens reaches a reasoning model as max_completion_tokens', async () => {
    const res = await fetch(`${url}/api/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({ lane: 'thinker', project_id: 'p', messages: hi, max_tokens: 50 }),
    });
    expect(res.status).toBe(200);
    expect(lastBody()).toMatchObject({ model: 'o-fake', max_completion_tokens: 50 });
    expect(lastBody()).not.toHaveProperty('max_tokens');
  });

  it('Responses max_output_tokens and reasoning.effort: mapped for a reasoning model, effort dropped elsewhere', async () => {
    const asked = { input: 'hi', max_output_tokens: 77, reasoning: { effort: 'high' } };
    expect(await post('/v1/responses', { model: 'thinker', ...asked })).toEqual({
      status: 200,
      dropped: null,
    });
    expect(lastBody()).toMatchObject({ max_completion_tokens: 77, reasoning_effort: 'high' });
    expect(lastBody()).not.toHaveProperty('max_tokens');

    expect(await post('/v1/responses', { model: 'plain', ...asked })).toEqual({
      status: 200,
      dropped: 'reasoning.effort',
    });
    expect(lastBody()).toMatchObject({ max_tokens: 77 });
    expect(lastBody()).not.toHaveProperty('reasoning_effort');
  });
});
