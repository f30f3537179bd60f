import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';

// A target whose provider serves OpenAI's Responses API (catalogue `responses`:
// `openai`) gets a /v1/responses request as the client sent it, only `model`
// replaced, and the client gets its answer and events as sent, only `model`
// set to <lane>/<model>: Codex's `reasoning`, `include`, hosted tools and
// reasoning items reach it, nothing is dropped.

let h: AiHarness;
let url: string;
let caller: TestCaller;

useAiHarness(
  () => ({
    AI_LANES_CONFIG: writeTempJson(
      'lanes.json',
      lanesConfig(
        { gpt: ['openai:resp-1'], claude: ['anthropic:claude-r'] },
        {
          image: ['openai:dall-e-3'],
          tts: ['openai:tts-1'],
          music: ['elevenlabs:music_v1'],
          soundfx: ['elevenlabs:sfx_v2'],
        },
      ),
    ),
    AI_ALLOWED_LANES: 'gpt,claude',
  }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

function post(raw: string) {
  return fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.apiKey}` },
    body: raw,
  });
}

/** What Codex sends beyond function tools: none of it has a chat equivalent. */
const CODEX_EXTRAS = {
  reasoning: { effort: 'medium', summary: 'auto' },
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: 'session-1',
  client_metadata: { turn: '1' },
  tools: [
    { type: 'function', name: 'exec_command', parameters: { type: 'object' }, strict: false },
    { type: 'web_search', external_web_access: true },
  ],
  store: false,
};

describe('/v1/responses to a target serving Responses', () => {
  it('a budget shorter than max_output_tokens caps the passed-through body', async () => {
    const app = h.startInstance({ AI_DAILY_TOKEN_BUDGET: '3000' });
    h.openai.set({ content: 'ok', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const res = await request(app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${caller.apiKey}`)
      .send({ model: 'gpt', input: 'hi', max_output_tokens: 50_000 });
    expect(res.status).toBe(200);
    const upstream = h.openaiRequests()[0]?.body as { max_output_tokens?: number };
    expect(upstream.max_output_tokens).toBeLessThanOrEqual(3000);
  });

  it('passes body and answer through byte for byte apart from model, and records cache tokens', async () => {
    h.openai.set({ content: 'Done.', usage: { prompt_tokens: 50, completion_tokens: 5, cached_tokens: 40 } });
    const input = [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
    ];
    const raw = JSON.stringify({ model: 'gpt', input, ...CODEX_EXTRAS });
    const res = await post(raw);
    const received = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-dropped-params')).toBeNull();
    const upstream = h.openaiRequests()[0];
    expect(upstream?.path).toBe('/v1/responses');
    expect(upstream?.rawBody).toBe(raw.replace('"model":"gpt"', '"model":"resp-1"'));
    expect(received).toBe(upstream?.sent?.replace('"model":"resp-1"', '"model":"gpt/resp-1"'));

    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
    expect(rows).toEqual([
      expect.objectContaining({
        endpoint: 'responses',
        provider: 'openai',
        promptTokens: 50,
        cachedTokens: 40,
      }),
    ]);
  });

  it('passes the event stream through apart from model', async () => {
    h.openai.set({ toolCalls: [{ name: 'exec_command', arguments: '{"cmd":"ls"}' }] });
    const raw = JSON.stringify({ model: 'gpt', input: 'list files', stream: true, ...CODEX_EXTRAS });
    const res = await post(raw);
    const received = await res.text();
    const upstream = h.openaiRequests()[0];
    expect(upstream?.rawBody).toBe(raw.replace('"model":"gpt"', '"model":"resp-1"'));
    const expected = (upstream?.sent ?? '').replaceAll('"model":"resp-1"', '"model":"gpt/resp-1"');
    // Keep-alive comments aside, the same event and data lines in the same order.
    const lines = (text: string) =>
      text.split('\n').filter((l) => l.startsWith('data: ') || l.startsWith('event: '));
    expect(lines(received)).toEqual(lines(expected));
    expect(lines(received).some((l) => l.includes('response.function_call_arguments.delta'))).toBe(true);
  });

  it('stores a passed-through answer and continues it on a translated target', async () => {
    h.openai.set({ content: 'Hello Ada.' });
    const first = (await (
      await post(JSON.stringify({ model: 'gpt', input: 'My name is Ada.', store: true }))
    ).json()) as { id: string; model: string };
    expect(first.model).toBe('gpt/resp-1');

    h.anthropic.set({ content: 'Ada.' });
    const res = await post(
      JSON.stringify({ model: 'claude', input: 'My name?', previous_response_id: first.id }),
    );
    expect(res.status).toBe(200);
    const body = h.anthropicRequests().at(-1)?.body as { messages: Array<{ role: string }> };
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });
});
