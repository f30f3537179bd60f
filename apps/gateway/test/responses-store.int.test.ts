import OpenAI from 'openai';
import { type AiHarness, type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';
import { sdkErrorOf } from './support/sdk-calls';

let h: AiHarness;
let url: string;
let caller: TestCaller;

const LANES = lanesConfig(
  { standard: ['openrouter:std-1'], claude: ['anthropic:claude-r'] },
  {
    image: ['openai:dall-e-3'],
    tts: ['openai:tts-1'],
    music: ['elevenlabs:music_v1'],
    soundfx: ['elevenlabs:sfx_v2'],
  },
);

useAiHarness(
  () => ({ AI_LANES_CONFIG: writeTempJson('lanes.json', LANES), AI_ALLOWED_LANES: 'standard,claude' }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

function sdk(apiKey = caller.apiKey): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0 });
}

type Json = Record<string, unknown>;

/** The messages the last upstream request carried, as role: text. */
function lastUpstreamTurns(kind: 'openai' | 'anthropic'): string[] {
  const requests = kind === 'openai' ? h.openaiRequests() : h.anthropicRequests();
  const body = requests.at(-1)?.body as Json;
  return ((body.messages ?? []) as Json[]).map((m) => {
    const content = m.content;
    const text =
      typeof content === 'string'
        ? content
        : ((content ?? []) as Json[]).map((b) => String(b.text ?? b.content ?? b.name ?? '')).join('');
    return `${m.role}: ${text}`;
  });
}

describe('stored responses (store: true)', () => {
  it('keeps the answer for its user: GET returns it, previous_response_id continues it on another target', async () => {
    h.openai.setFor('std-1', { content: 'Hello Ada.' });
    const first = await sdk().responses.create({
      model: 'standard',
      instructions: 'Be brief.',
      input: 'My name is Ada.',
      store: true,
    });
    expect(first).toMatchObject({ store: true });
    const read = await sdk().responses.retrieve(first.id);
    expect(read).toMatchObject({ id: first.id, store: true, output_text: 'Hello Ada.' });

    // Continued on an Anthropic target: the stored conversation comes first, instructions are not carried.
    h.anthropic.setFor('claude-r', { content: 'Your name is Ada.' });
    const second = await sdk().responses.create({
      model: 'claude',
      input: 'What is my name?',
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe('Your name is Ada.');
    expect(second.previous_response_id).toBe(first.id);
    expect(second).toMatchObject({ store: false });
    expect(lastUpstreamTurns('anthropic')).toEqual([
      'user: My name is Ada.',
      'assistant: Hello Ada.',
      'user: What is my name?',
    ]);
    // Not stored (store omitted): it cannot be read back.
    const missing = await sdkErrorOf(sdk().responses.retrieve(second.id), OpenAI.NotFoundError);
    expect(missing.status).toBe(404);
  });

  it('keeps a streamed answer with its tool call, and continues with the tool output', async () => {
    h.openai.setFor('std-1', { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const stream = sdk().responses.stream({
      model: 'standard',
      input: 'Weather in Oslo?',
      store: true,
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }],
    });
    const first = await stream.finalResponse();
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', call_id: 'call_fake_0' });

    h.openai.setFor('std-1', { content: 'Sunny.' });
    const second = await sdk().responses.create({
      model: 'standard',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_fake_0', output: 'sunny' }],
      store: true,
    });
    expect(second.output_text).toBe('Sunny.');
    const body = h.openaiRequests().at(-1)?.body as Json;
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_fake_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_fake_0', content: 'sunny' },
    ]);
    // The chain goes on: the second stored response holds the whole conversation.
    h.openai.setFor('std-1', { content: 'Bye.' });
    await sdk().responses.create({ model: 'standard', previous_response_id: second.id, input: 'Thanks' });
    expect(lastUpstreamTurns('openai')).toEqual([
      'user: Weather in Oslo?',
      'assistant: ',
      'tool: sunny',
      'assistant: Sunny.',
      'user: Thanks',
    ]);
  });

  it('is never readable, continuable or deletable by another user', async () => {
    const kept = await sdk().responses.create({ model: 'standard', input: 'secret', store: true });
    const other = await h.createCaller();

    const read = await sdkErrorOf(sdk(other.apiKey).responses.retrieve(kept.id), OpenAI.NotFoundError);
    expect(read.message).toContain(`Response with id '${kept.id}' not found.`);
    const chained = await sdkErrorOf(
      sdk(other.apiKey).responses.create({ model: 'standard', input: 'hi', previous_response_id: kept.id }),
      OpenAI.NotFoundError,
    );
    expect(chained.param).toBe('previous_response_id');
    expect(chained.message).toContain(`Previous response with id '${kept.id}' not found.`);
    await sdkErrorOf(sdk(other.apiKey).responses.delete(kept.id), OpenAI.NotFoundError);

    // Still the owner's, intact.
    expect((await sdk().responses.retrieve(kept.id)).id).toBe(kept.id);
  });

  it('DELETE removes it: reading or continuing it is then 404', async () => {
    const kept = await sdk().responses.create({ model: 'standard', input: 'hi', store: true });
    const res = await fetch(`${url}/v1/responses/${kept.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${caller.apiKey}` },
    });
    expect(await res.json()).toEqual({ id: kept.id, object: 'response', deleted: true });
    await sdkErrorOf(sdk().responses.retrieve(kept.id), OpenAI.NotFoundError);
    await sdkErrorOf(
      sdk().responses.create({ model: 'standard', input: 'hi', previous_response_id: kept.id }),
      OpenAI.NotFoundError,
    );
  });

  it('expires after the retention: the sweep removes it and it reads as missing', async () => {
    const kept = await sdk().responses.create({ model: 'standard', input: 'hi', store: true });
    const row = await h.prisma.storedResponse.findUniqueOrThrow({ where: { id: kept.id } });
    const days = (row.expiresAt.getTime() - row.createdAt.getTime()) / 86_400_000;
    expect(Math.round(days)).toBe(30);

    await h.prisma.storedResponse.update({
      where: { id: kept.id },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    await sdkErrorOf(sdk().responses.retrieve(kept.id), OpenAI.NotFoundError);
    expect(await h.deps.responses?.sweep()).toBeGreaterThanOrEqual(1);
    expect(await h.prisma.storedResponse.findUnique({ where: { id: kept.id } })).toBeNull();
  });
});

describe('storing turned off (RESPONSES_RETENTION_DAYS=0)', () => {
  it('answers store: true without keeping it, naming store as dropped', async () => {
    const app = h.startInstance({ RESPONSES_RETENTION_DAYS: '0' });
    const { url: offUrl } = await h.listen(app);
    const res = await fetch(`${offUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.apiKey}` },
      body: JSON.stringify({ model: 'standard', input: 'hi', store: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-dropped-params')).toBe('store');
    const body = (await res.json()) as { id: string; store: boolean };
    expect(body.store).toBe(false);
    expect(await h.prisma.storedResponse.findUnique({ where: { id: body.id } })).toBeNull();
  });
});
