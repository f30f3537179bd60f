import { parsePrometheusText } from '@platform/testing';
import OpenAI from 'openai';
import { revokeApiKey } from '../src/api-keys/revoke-api-key';
import {
  type AiHarness,
  TEST_LANES,
  type TestCaller,
  useAiHarness,
  writeTempJson,
} from './support/ai-harness';
import { sdkErrorOf } from './support/sdk-calls';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const hi = [{ role: 'user' as const, content: 'hi' }];

let h: AiHarness;
let url: string;
let caller: TestCaller;

/** The official SDK pointed at the gateway, as a user would configure it. */
function sdk(opts: { apiKey?: string; baseURL?: string; project?: string } = {}): OpenAI {
  return new OpenAI({
    apiKey: opts.apiKey ?? caller.apiKey,
    baseURL: opts.baseURL ?? `${url}/v1`,
    maxRetries: 0,
    ...(opts.project ? { defaultHeaders: { 'X-Project-Id': opts.project } } : {}),
  });
}

function errorOf(call: Promise<unknown>) {
  return sdkErrorOf(call, OpenAI.APIError);
}

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.apiKey}`, ...headers },
    body: JSON.stringify(body),
  });
}

async function usageRows(userId: string) {
  await h.usage.flush();
  return h.prisma.usageRecord.findMany({ where: { userId }, orderBy: { id: 'asc' } });
}

useAiHarness(
  () => {
    // groq (free-a) refuses `seed`: it is left out of what free-a is sent, and named.
    const lanes = { ...TEST_LANES, providers: { groq: { unsupported_params: ['seed'] } } };
    return {
      AI_LANES_CONFIG: writeTempJson('lanes.json', lanes),
      AI_UPSTREAM_TIMEOUT_MS: '1000',
      AI_STREAM_IDLE_TIMEOUT_MS: '500',
    };
  },
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

describe('POST /v1/chat/completions with the openai SDK', () => {
  it('passes body and answer through byte for byte apart from model, and records usage', async () => {
    h.openai.set({
      content: 'Hi there.',
      usage: { prompt_tokens: 4, completion_tokens: 3, cached_tokens: 2, reasoning_tokens: 1 },
    });
    const sent = JSON.stringify({ messages: hi, model: 'free', temperature: 0.3, a_new_field: [1] });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${caller.apiKey}`,
        'x-project-id': 'proj-oa',
      },
      body: sent,
    });
    const received = await res.text();
    const requestId = res.headers.get('x-request-id') ?? '';
    expect(requestId).toMatch(UUID);
    const [upstream] = h.openaiRequests();
    expect(upstream?.headers.authorization).toBe('Bearer sk-server-groq-0002');
    // The client's bytes with only the model replaced, in place: no default max_tokens, no stream flag.
    expect(upstream?.rawBody).toBe(sent.replace('"model":"free"', '"model":"free-a"'));
    // The provider's bytes (its id, extras, usage details) with only the model replaced.
    expect(received).toBe(upstream?.sent?.replace('"model":"free-a"', '"model":"free/free-a"'));
    expect(JSON.parse(received)).toMatchObject({
      model: 'free/free-a',
      usage: {
        prompt_tokens_details: { cached_tokens: 2 },
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    });

    const [row] = await usageRows(caller.userId);
    expect(row).toMatchObject({
      requestId,
      projectId: 'proj-oa',
      endpoint: 'chat',
      lane: 'free',
      provider: 'groq',
      model: 'free-a',
      status: 200,
      promptTokens: 4,
      completionTokens: 3,
      cachedTokens: 2,
      totalTokens: 7,
    });
  });

  it('passes a stream through event for event apart from model', async () => {
    h.openai.set({
      chunks: ['Hel', 'lo'],
      usage: { prompt_tokens: 2, completion_tokens: 2, cached_tokens: 1 },
    });
    const body = { model: 'free', messages: hi, stream: true, stream_options: { include_usage: true } };
    const res = await post('/v1/chat/completions', body);
    const received = await res.text();
    const upstream = h.openaiRequests()[0];
    expect(upstream?.rawBody).toBe(JSON.stringify({ ...body, model: 'free-a' }));
    const expected = (upstream?.sent ?? '').replaceAll('"model":"free-a"', '"model":"free/free-a"');
    // Keep-alive comments aside, the same data lines in the same order.
    const dataLines = (text: string) => text.split('\n').filter((l) => l.startsWith('data: '));
    expect(dataLines(received)).toEqual(dataLines(expected));
    expect(dataLines(received).length).toBeGreaterThan(3);
  });

  it('takes `<lane>/<model>`, the x-api-key header, and accounts to project default without X-Project-Id', async () => {
    const res = await post(
      '/v1/chat/completions',
      { model: 'standard/std-2', messages: hi },
      {
        authorization: '',
        'x-api-key': caller.apiKey,
      },
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('standard/std-2');
    expect(h.openaiRequests().map((r) => r.model)).toEqual(['std-2']);
    const [row] = await usageRows(caller.userId);
    expect(row).toMatchObject({ projectId: 'default', provider: 'openrouter', model: 'std-2' });
  });

  it('takes a plain model name, as unmodified tools send it: the first allowed lane listing it', async () => {
    const answer = await sdk().chat.completions.create({ model: 'std-2', messages: hi });
    expect(answer.model).toBe('standard/std-2');
    expect(h.openaiRequests().at(-1)?.model).toBe('std-2');
    expect((await sdk().models.retrieve('std-2')).id).toBe('std-2');
  });

  it('streams chat.completion.chunk events read with the SDK iterator, with usage when asked', async () => {
    h.openai.set({
      chunks: ['Hel', 'lo'],
      usage: { prompt_tokens: 2, completion_tokens: 2, cached_tokens: 1, reasoning_tokens: 1 },
    });
    const stream = await sdk({ project: 'proj-s' }).chat.completions.create({
      model: 'free',
      messages: hi,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello');
    expect(new Set(chunks.map((c) => `${c.object} ${c.model}`))).toEqual(
      new Set(['chat.completion.chunk free/free-a']),
    );
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 2,
        completion_tokens: 2,
        total_tokens: 4,
        prompt_tokens_details: { cached_tokens: 1 },
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    });
    const [row] = await usageRows(caller.userId);
    expect(row).toMatchObject({ projectId: 'proj-s', endpoint: 'stream', status: 200, totalTokens: 4 });
  });

  it('ends the wire stream with data: [DONE] and sends no usage unless asked', async () => {
    h.openai.set({ chunks: ['a', 'b'] });
    const res = await post('/v1/chat/completions', { model: 'free', messages: hi, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice('data: '.length)) as Record<string, unknown>);
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) expect(event).not.toHaveProperty('usage');
    // Upstream is always asked for usage: accounting needs it.
    expect(h.openaiRequests()[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('falls back from a failing provider to the next, plain and streamed, and counts it in /metrics', async () => {
    const fallbacks = async (endpoint: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const family = parsePrometheusText(text).find((f) => f.name === 'ai_upstream_fallbacks_total');
      const metric = family?.metrics.find(
        (m) => m.labels?.endpoint === endpoint && m.labels.from_provider === 'groq',
      );
      return Number(metric?.value ?? 0);
    };
    const before = { chat: await fallbacks('chat'), stream: await fallbacks('stream') };
    h.openai.setFor('free-a', { status: 503 });
    h.openai.setFor('free-b', { content: 'from b', chunks: ['from', ' b'] });
    const completion = await sdk().chat.completions.create({ model: 'free', messages: hi });
    expect(completion.model).toBe('free/free-b');
    expect(completion.choices[0]?.message.content).toBe('from b');

    const stream = await sdk().chat.completions.create({ model: 'free', messages: hi, stream: true });
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      expect(chunk.model).toBe('free/free-b');
    }
    expect(text).toBe('from b');
    // Each 503 is retried once on the same target before the fallback (issue 27).
    expect(h.openaiRequests().map((r) => `${r.model} ${r.status}`)).toEqual([
      'free-a 503',
      'free-a 503',
      'free-b 200',
      'free-a 503',
      'free-a 503',
      'free-b 200',
    ]);
    expect({ chat: await fallbacks('chat'), stream: await fallbacks('stream') }).toEqual({
      chat: before.chat + 1,
      stream: before.stream + 1,
    });
  });

  it('ends a stream that fails after it started with an error the SDK raises', async () => {
    h.openai.set({ chunks: ['one ', 'two ', 'three'], failAfterChunks: 1 });
    const stream = await sdk().chat.completions.create({ model: 'free/free-a', messages: hi, stream: true });
    const seen: string[] = [];
    const err = await errorOf(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    );
    expect(seen.join('')).toBe('one ');
    expect(err.message).toContain('upstream AI service error');
  });
});

describe('errors in OpenAI shape', () => {
  it('answers an unknown model, a model the lane does not offer, and a lane the key may not use with 404 model_not_found', async () => {
    const valid = (await sdk().models.list()).data.map((m) => m.id).join(', ');
    for (const model of ['gpt-4o', 'free/std-1', 'free/']) {
      const err = await errorOf(sdk().chat.completions.create({ model, messages: hi }));
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.error).toEqual({
        message: `The model \`${model}\` does not exist or you do not have access to it. Valid models: ${valid} (GET /v1/models).`,
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      });
    }
    // premium is configured but not allowed on this instance.
    const narrow = await h.listen(h.startInstance({ AI_ALLOWED_LANES: 'free,standard' }));
    const err = await errorOf(
      sdk({ baseURL: `${narrow.url}/v1` }).chat.completions.create({ model: 'premium', messages: hi }),
    );
    expect(err.status).toBe(404);
    expect(err.code).toBe('model_not_found');
    expect(h.openaiRequests()).toHaveLength(0);
  });

  it('refuses a revoked key with AuthenticationError and a missing one with 401', async () => {
    await revokeApiKey(h.deps, { userId: caller.userId, keyId: caller.apiKeyId });
    const err = await errorOf(sdk().chat.completions.create({ model: 'free', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.error).toEqual({
      message: 'invalid api key',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    });
    expect(err.requestID ?? err.headers?.get('x-request-id')).toMatch(UUID);

    const missing = await fetch(`${url}/v1/models`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('x-request-id')).toMatch(UUID);
    expect(await missing.json()).toEqual({
      error: {
        message: 'missing api key',
        type: 'invalid_request_error',
        param: null,
        code: 'missing_api_key',
      },
    });
  });

  it('answers over the per-key limit with RateLimitError carrying retry-after', async () => {
    const limited = await h.listen(h.startInstance({ AI_RATE_LIMIT_PER_MINUTE: '1' }));
    const client = sdk({ baseURL: `${limited.url}/v1` });
    await client.chat.completions.create({ model: 'free', messages: hi });
    const err = await errorOf(client.chat.completions.create({ model: 'free', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number(err.headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(err.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
  });

  it('applies the native message rules with their statuses', async () => {
    const empty = await errorOf(sdk().chat.completions.create({ model: 'free', messages: [] }));
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect(empty.error).toMatchObject({ message: 'messages cannot be empty', code: 'messages_empty' });

    const big = 'x'.repeat(64 * 1024 + 1);
    const tooLong = await errorOf(
      sdk().chat.completions.create({
        model: 'free',
        messages: [{ role: 'user', content: [{ type: 'text', text: big }] }],
      }),
    );
    expect(tooLong.status).toBe(400);
    expect(tooLong.code).toBe('message_too_long');

    const wrongType = await post('/v1/chat/completions', {
      model: 'free',
      messages: [{ role: 'user', content: 5 }],
    });
    expect(wrongType.status).toBe(422);
    expect(await wrongType.json()).toMatchObject({
      error: { type: 'invalid_request_error', code: 'deserialization_error', param: 'messages.0.content' },
    });
    expect(h.openaiRequests()).toHaveLength(0);
  });

  it('lets allowlisted browser origins send the Bearer key and X-Project-Id', async () => {
    const browser = await h.listen(h.startInstance({ GATEWAY_CORS_ORIGINS: 'http://app.test' }));
    const res = await fetch(`${browser.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-project-id',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.test');
    expect(res.headers.get('access-control-allow-headers')?.split(',')).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-project-id']),
    );
  });

  it('answers an unknown /v1 path with 404 in OpenAI shape', async () => {
    const res = await fetch(`${url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.apiKey}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        message: 'Invalid URL (POST /v1/audio/transcriptions)',
        type: 'invalid_request_error',
        param: null,
        code: 'not_found',
      },
    });
  });
});

describe('parameters', () => {
  it('passes the OpenAI parameters to the provider as sent', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: {} } },
      },
    ];
    const params = {
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 50,
      stop: ['END'],
      seed: 7,
      user: 'u-1',
      response_format: { type: 'json_object' as const },
      tools,
      tool_choice: 'auto' as const,
    };
    await sdk().chat.completions.create({ model: 'standard', messages: hi, ...params });
    expect(h.openaiRequests()[0]?.body).toEqual({ model: 'std-1', messages: hi, ...params });
  });

  it('leaves out a parameter the provider refuses and names it in x-gateway-dropped-params', async () => {
    const { data, response } = await sdk()
      .chat.completions.create({ model: 'free', messages: hi, seed: 1, temperature: 0.5 })
      .withResponse();
    expect(data.model).toBe('free/free-a');
    expect(response.headers.get('x-gateway-dropped-params')).toBe('seed');
    const [sent] = h.openaiRequests();
    expect(sent?.body).not.toHaveProperty('seed');
    expect(sent?.body).toMatchObject({ model: 'free-a', temperature: 0.5 });
  });

  it('passes a field it does not read to an OpenAI-protocol target as sent, naming nothing', async () => {
    const extras = {
      logit_bias: { 1: 2 },
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      prompt_cache_key: 'k-1',
      service_tier: 'auto',
      metadata: { a: 'b' },
      store: false,
      logprobs: true,
      top_logprobs: 2,
      a_future_field: { nested: [1, 'x'] },
    };
    const res = await post('/v1/chat/completions', { model: 'standard', messages: hi, ...extras });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-dropped-params')).toBeNull();
    expect(h.openaiRequests()[0]?.body).toEqual({ model: 'std-1', messages: hi, ...extras });
  });
});

describe('x-gateway-dropped-params', () => {
  it('shows only plain field names, at most 32, whatever the client sends', async () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, i]));
    // Translated to chat (groq), Responses fields without an equivalent are dropped: 40 unknown ones and an odd key.
    const res = await post('/v1/responses', {
      model: 'free',
      input: 'hi',
      'bad\r\nx-evil: 1': 1,
      ...many,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-evil')).toBeNull();
    const shown = Array.from({ length: 32 }, (_, i) => `f${i}`);
    expect(res.headers.get('x-gateway-dropped-params')).toBe([...shown, '...'].join(','));
  });
});

describe('tool calls', () => {
  const tools = [
    { type: 'function' as const, function: { name: 'weather', parameters: { type: 'object' } } },
  ];

  it('returns the provider tool calls, plain and streamed, and takes the tool round trip back', async () => {
    h.openai.set({ toolCalls: [{ name: 'weather', arguments: '{"city":"Oslo"}' }] });
    const completion = await sdk().chat.completions.create({ model: 'free', messages: hi, tools });
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [
          {
            id: 'call_fake_0',
            type: 'function',
            function: { name: 'weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });

    // A stream that carries only tool calls still starts (and can still fall back before it does).
    const stream = await sdk().chat.completions.create({ model: 'free', messages: hi, tools, stream: true });
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ args, finish }).toEqual({ args: '{"city":"Oslo"}', finish: 'tool_calls' });

    h.openai.set({ content: 'Sunny.' });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    const followUp: OpenAI.ChatCompletionMessageParam[] = [
      ...hi,
      { role: 'assistant', content: null, tool_calls: call && call.type === 'function' ? [call] : [] },
      { role: 'tool', tool_call_id: 'call_fake_0', content: '{"sky":"clear"}' },
    ];
    const answer = await sdk().chat.completions.create({ model: 'free', messages: followUp, tools });
    expect(answer.choices[0]?.message.content).toBe('Sunny.');
    expect(h.openaiRequests().at(-1)?.body).toMatchObject({ messages: followUp });
  });
});

describe('GET /v1/models', () => {
  it('lists every allowed lane and its lane/model ids in OpenAI list format', async () => {
    const ids: string[] = [];
    for await (const model of sdk().models.list()) {
      expect(model).toEqual({ id: model.id, object: 'model', created: 0, owned_by: 'gateway' });
      ids.push(model.id);
    }
    expect(ids).toEqual([
      'free',
      'free/free-a',
      'free/free-b',
      'free/free-c',
      'standard',
      'standard/std-1',
      'standard/std-2',
      'premium',
      'premium/prem-1',
    ]);
    expect((await sdk().models.retrieve('free/free-b')).id).toBe('free/free-b');
    const err = await errorOf(sdk().models.retrieve('free/nope'));
    expect(err.status).toBe(404);
    expect(err.code).toBe('model_not_found');
  });
});
