import { fakeEmbedding } from '@platform/testing';
import OpenAI from 'openai';
import { type AiHarness, type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';
import { sdkErrorOf, usageRowsDuring } from './support/sdk-calls';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: AiHarness;
let url: string;
let caller: TestCaller;

const base = lanesConfig(
  {
    // The translated path: std-1's provider serves chat only (`openai` serves Responses itself, see below).
    standard: ['openrouter:std-1', 'openai:std-2'],
    claude: ['anthropic:claude-r'],
  },
  {
    image: ['openai:dall-e-3'],
    tts: ['openai:tts-1'],
    music: ['elevenlabs:music_v1'],
    soundfx: ['elevenlabs:sfx_v2'],
  },
);
/** `standard` also offers two embedding models, in fallback order. */
const LANES = {
  ...base,
  lanes: {
    ...base.lanes,
    standard: {
      ...base.lanes.standard,
      embedding_targets: [
        { provider: 'openai', model: 'emb-1' },
        { provider: 'openrouter', model: 'emb-2' },
      ],
    },
  },
};

useAiHarness(
  () => ({
    AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
    AI_ALLOWED_LANES: 'standard,claude',
    AI_UPSTREAM_TIMEOUT_MS: '2000',
    AI_STREAM_IDLE_TIMEOUT_MS: '1000',
  }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

/** The official SDK pointed at the gateway, only base URL and key changed. */
function sdk(): OpenAI {
  return new OpenAI({ apiKey: caller.apiKey, baseURL: `${url}/v1`, maxRetries: 0 });
}

/** The caller's usage ledger rows made while `run` ran. */
function recorded(run: () => Promise<unknown>) {
  return usageRowsDuring(h, caller.userId, run);
}

function errorOf(call: Promise<unknown>) {
  return sdkErrorOf(call, OpenAI.APIError);
}

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('POST /v1/responses with the openai SDK', () => {
  it('answers text with instructions, stateless, and records usage', async () => {
    h.openai.setFor('std-1', { content: 'Paris.', usage: { prompt_tokens: 9, completion_tokens: 2 } });
    let requestId = '';
    let response: OpenAI.Responses.Response | undefined;
    const events = await recorded(async () => {
      const answer = await sdk()
        .responses.create({ model: 'standard', instructions: 'Be brief.', input: 'Capital of France?' })
        .withResponse();
      requestId = answer.response.headers.get('x-request-id') ?? '';
      response = answer.data;
    });
    expect(requestId).toMatch(UUID);
    expect(response).toMatchObject({
      id: `resp_${requestId}`,
      object: 'response',
      status: 'completed',
      model: 'standard/std-1',
      store: false,
      previous_response_id: null,
      instructions: 'Be brief.',
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Paris.', annotations: [] }],
        },
      ],
      usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 },
    });
    expect(response?.output_text).toBe('Paris.');
    expect(h.openaiRequests()[0]?.body).toMatchObject({
      model: 'std-1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Capital of France?' },
      ],
    });
    expect(events).toEqual([
      expect.objectContaining({
        endpoint: 'responses',
        provider: 'openrouter',
        status: 200,
        totalTokens: 11,
      }),
    ]);
  });

  it('streams text with the Responses event types', async () => {
    h.openai.setFor('std-1', { chunks: ['Hel', 'lo'], usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const stream = await sdk().responses.create({ model: 'standard', input: 'Hi', stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('Hello');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(sequence).toEqual(types.map((_, i) => i));
    expect(completed?.output).toEqual([
      expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: 'Hello' })] }),
    ]);
    expect(completed?.usage).toMatchObject({ input_tokens: 3, output_tokens: 2 });
  });

  it('answers a function tool call, and takes its output back', async () => {
    h.openai.setFor('std-1', { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const first = await sdk().responses.create({
      model: 'standard',
      input: 'Weather in Paris?',
      tools: [weatherTool],
      tool_choice: 'required',
    });
    const call = first.output[0];
    expect(call).toMatchObject({
      type: 'function_call',
      call_id: 'call_fake_0',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
    expect(h.openaiRequests()[0]?.body).toMatchObject({
      tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherTool.parameters } }],
    });

    h.openai.setFor('std-1', { content: 'It is 18 degrees.' });
    const second = await sdk().responses.create({
      model: 'standard',
      tools: [weatherTool],
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_fake_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_fake_0', output: '18C' },
      ],
    });
    expect(second.output_text).toBe('It is 18 degrees.');
    expect(h.openaiRequests()[1]?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          tool_calls: [
            { id: 'call_fake_0', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_fake_0', content: '18C' },
      ],
    });
  });

  it('streams a function call that the SDK stream helper assembles', async () => {
    h.openai.setFor('std-1', { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const final = await sdk()
      .responses.stream({ model: 'standard', input: 'Weather in Oslo?', tools: [weatherTool] })
      .finalResponse();
    expect(final.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' }),
    ]);
  });

  it('answers an unknown previous_response_id with 404, naming the field', async () => {
    const chained = await errorOf(
      sdk().responses.create({ model: 'standard', input: 'hi', previous_response_id: 'resp_123' }),
    );
    expect(chained.status).toBe(404);
    expect(chained.param).toBe('previous_response_id');
    expect(chained.message).toContain("Previous response with id 'resp_123' not found.");
    expect(h.openaiRequests()).toHaveLength(0);
  });

  it('translates to an Anthropic target, cache reads included in usage', async () => {
    h.anthropic.setFor('claude-r', {
      content: 'Bonjour.',
      usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 500 },
    });
    const response = await sdk().responses.create({
      model: 'claude',
      instructions: 'French.',
      input: 'Hello',
    });
    expect(response.output_text).toBe('Bonjour.');
    expect(response.usage).toMatchObject({
      input_tokens: 510,
      input_tokens_details: { cached_tokens: 500 },
      output_tokens: 2,
    });
    expect(h.anthropicRequests()[0]?.body).toEqual({
      model: 'claude-r',
      max_tokens: 4096,
      system: 'French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    });
  });
});

describe('POST /v1/responses streamed from an Anthropic target', () => {
  it('relays the text and reports the cache reads in the completed response', async () => {
    h.anthropic.setFor('claude-r', {
      chunks: ['Bon', 'jour.'],
      usage: { input_tokens: 4, output_tokens: 2, cache_read_input_tokens: 40 },
    });
    const final = await sdk()
      .responses.stream({ model: 'claude', instructions: 'French.', input: 'Hello' })
      .finalResponse();
    expect(final.output_text).toBe('Bonjour.');
    expect(final.model).toBe('claude/claude-r');
    expect(final.usage).toMatchObject({ input_tokens: 44, input_tokens_details: { cached_tokens: 40 } });
  });
});

describe('POST /v1/embeddings with the openai SDK', () => {
  it('returns the vectors of each input and records usage', async () => {
    h.openai.setFor('emb-1', { usage: { prompt_tokens: 6 } });
    let result: OpenAI.CreateEmbeddingResponse | undefined;
    const events = await recorded(async () => {
      result = await sdk().embeddings.create({ model: 'standard', input: ['alpha', 'beta'] });
    });
    expect(result?.model).toBe('standard/emb-1');
    expect(result?.data.map((d) => d.index)).toEqual([0, 1]);
    // The SDK asked for base64 and decoded it: float32 precision.
    const expected = fakeEmbedding('beta');
    expect(result?.data[1]?.embedding).toHaveLength(expected.length);
    for (const [i, v] of (result?.data[1]?.embedding ?? []).entries()) {
      expect(v).toBeCloseTo(expected[i] ?? Number.NaN, 5);
    }
    expect(result?.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(events).toEqual([
      expect.objectContaining({
        endpoint: 'embeddings',
        provider: 'openai',
        model: 'emb-1',
        promptTokens: 6,
      }),
    ]);
  });

  it('falls back to the next embedding target and serves `<lane>/<model>`', async () => {
    h.openai.setFor('emb-1', { status: 500 });
    const fallback = await sdk().embeddings.create({
      model: 'standard',
      input: 'x',
      encoding_format: 'float',
    });
    expect(fallback.model).toBe('standard/emb-2');
    expect(fallback.data[0]?.embedding).toEqual(fakeEmbedding('x'));

    const named = await sdk().embeddings.create({
      model: 'standard/emb-2',
      input: 'y',
      encoding_format: 'float',
    });
    expect(named.model).toBe('standard/emb-2');
  });

  it('a lane without embedding models is 404 model_not_found', async () => {
    const err = await errorOf(sdk().embeddings.create({ model: 'claude', input: 'x' }));
    expect(err.status).toBe(404);
    expect(err.code).toBe('model_not_found');
  });
});

describe('an Anthropic target behind /v1/chat/completions', () => {
  it('streams a tool call translated from Anthropic events, cache tokens in the recorded usage', async () => {
    h.anthropic.setFor('claude-r', {
      toolCalls: [{ name: 'get_weather', input: { city: 'Rome' } }],
      usage: {
        input_tokens: 7,
        output_tokens: 5,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 20,
      },
    });
    const calls: Record<number, { id?: string; name?: string; arguments: string }> = {};
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    const events = await recorded(async () => {
      const stream = await sdk().chat.completions.create({
        model: 'claude',
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: 'Use tools.' },
          { role: 'user', content: 'Weather in Rome?' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherTool.parameters } }],
      });
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices) {
          if (choice.finish_reason) finish = choice.finish_reason;
          for (const call of choice.delta.tool_calls ?? []) {
            const entry = calls[call.index] ?? { arguments: '' };
            entry.id ??= call.id;
            entry.name ??= call.function?.name;
            entry.arguments += call.function?.arguments ?? '';
            calls[call.index] = entry;
          }
        }
      }
    });
    expect(calls).toEqual({ 0: { id: 'toolu_fake_0', name: 'get_weather', arguments: '{"city":"Rome"}' } });
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 127, completion_tokens: 5, total_tokens: 132 });
    expect(h.anthropicRequests()[0]?.body).toMatchObject({
      system: 'Use tools.',
      stream: true,
      tools: [{ name: 'get_weather', input_schema: weatherTool.parameters }],
    });
    expect(events).toEqual([
      expect.objectContaining({
        endpoint: 'stream',
        provider: 'anthropic',
        promptTokens: 127,
        cachedTokens: 100,
        cacheWriteTokens: 20,
      }),
    ]);
  });

  it('drops seed and logprobs, which Anthropic has no equivalent for, naming them', async () => {
    const { response } = await sdk()
      .chat.completions.create({
        model: 'claude',
        seed: 1,
        logprobs: true,
        parallel_tool_calls: false,
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-params')).toBe('seed,logprobs');
    const [sent] = h.anthropicRequests();
    expect(sent?.body).not.toHaveProperty('seed');
    // parallel_tool_calls: false has an equivalent.
    expect(sent?.body).toMatchObject({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
  });
});
