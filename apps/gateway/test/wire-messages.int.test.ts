import Anthropic from '@anthropic-ai/sdk';
import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness, writeTempJson } from './support/ai-harness';
import { lanesConfig } from './support/lanes';
import { sdkErrorOf, usageRowsDuring } from './support/sdk-calls';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: AiHarness;
let url: string;
let caller: TestCaller;

/**
 * Lanes of this file: `standard` on OpenAI-compatible targets (translated
 * both ways), `claude` on the Anthropic fake only (passed through), `mixed`
 * Anthropic first with an OpenAI-compatible fallback.
 */
const LANES = {
  ...lanesConfig(
    {
      standard: ['openai:std-1', 'openrouter:std-2'],
      claude: ['anthropic:claude-test-1'],
      mixed: ['anthropic:claude-test-2', 'openai:mix-2'],
    },
    {
      image: ['openai:dall-e-3'],
      tts: ['openai:tts-1'],
      music: ['elevenlabs:music_v1'],
      soundfx: ['elevenlabs:sfx_v2'],
    },
  ),
  // Anthropic's shape of price: cache reads at 0.1 x input, cache writes at 1.25 x.
  prices: { 'anthropic/claude-test-1': { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 } },
};

useAiHarness(
  () => ({
    AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
    AI_ALLOWED_LANES: 'standard,claude,mixed',
    // Idle timeout above the attempt timeout, so a long thinking pause tests the latter.
    AI_UPSTREAM_TIMEOUT_MS: '1000',
    AI_STREAM_IDLE_TIMEOUT_MS: '3000',
  }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

/** The official SDK pointed at the gateway, only base URL and key changed. */
function sdk(apiKey = caller.apiKey): Anthropic {
  return new Anthropic({ apiKey, baseURL: url, maxRetries: 0 });
}

/** The caller's usage ledger rows made while `run` ran. */
function recorded(run: () => Promise<unknown>) {
  return usageRowsDuring(h, caller.userId, run);
}

function errorOf(call: Promise<unknown>) {
  return sdkErrorOf(call, Anthropic.APIError);
}

describe('POST /v1/messages to an OpenAI-compatible target (translated)', () => {
  it('answers a message with a system prompt and stop sequences, in Anthropic format', async () => {
    h.openai.setFor('std-1', { content: 'Bonjour.', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const { data, response } = await sdk()
      .messages.create({
        model: 'standard',
        max_tokens: 100,
        system: 'Answer in French.',
        stop_sequences: ['END'],
        messages: [{ role: 'user', content: 'Hello' }],
      })
      .withResponse();

    const requestId = response.headers.get('x-request-id') ?? '';
    expect(requestId).toMatch(UUID);
    expect(data).toEqual({
      id: `msg_${requestId}`,
      type: 'message',
      role: 'assistant',
      model: 'standard/std-1',
      content: [{ type: 'text', text: 'Bonjour.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 3,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    const [sent] = h.openaiRequests();
    expect(sent?.body).toMatchObject({
      model: 'std-1',
      max_tokens: 100,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      ],
    });
  });

  it('streams text with the Anthropic event sequence', async () => {
    h.openai.setFor('std-1', {
      chunks: ['Hel', 'lo ', 'there'],
      usage: { prompt_tokens: 5, completion_tokens: 3 },
    });
    const stream = await sdk().messages.create({
      model: 'standard',
      max_tokens: 50,
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const events: string[] = [];
    let text = '';
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'message_delta') {
        expect(event.delta.stop_reason).toBe('end_turn');
        expect(event.usage).toMatchObject({ input_tokens: 5, output_tokens: 3 });
      }
    }
    expect(text).toBe('Hello there');
    // The SDK hides `ping` events, which the gateway sends after message_start.
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('streams a tool call whose JSON input the SDK assembles', async () => {
    h.openai.setFor('std-1', {
      toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' }],
    });
    const message = await sdk()
      .messages.stream({
        model: 'standard',
        max_tokens: 50,
        tools: [
          {
            name: 'get_weather',
            description: 'Weather of a city',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        tool_choice: { type: 'any' },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      })
      .finalMessage();

    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_fake_0', name: 'get_weather', input: { city: 'Paris', unit: 'c' } },
    ]);
    expect(h.openaiRequests()[0]?.body).toMatchObject({
      tool_choice: 'required',
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object' } },
        },
      ],
    });
  });

  it('sends a tool result back as a tool message', async () => {
    h.openai.setFor('std-1', { content: 'It is 18 degrees.' });
    await sdk().messages.create({
      model: 'standard',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' }] },
      ],
    });
    expect(h.openaiRequests()[0]?.body).toMatchObject({
      messages: [
        { role: 'user' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
      ],
    });
  });

  it('drops what the chat format cannot carry, names it in x-gateway-dropped-params, maps the rest', async () => {
    h.openai.setFor('std-1', { content: 'Seen.' });
    // top_k and a system turn are taken by the API but not typed by this SDK version.
    const params = {
      model: 'standard',
      max_tokens: 50,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [
        { name: 'lookup', input_schema: { type: 'object', properties: {} } },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a doc' } },
            { type: 'text', text: 'What is this?' },
          ],
        },
        // Claude Code's mid-conversation system turn (its shape for model names it does not know).
        { role: 'system', content: 'Answer in one word.' },
      ],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const { data, response } = await sdk().messages.create(params).withResponse();

    expect(data.content).toEqual([{ type: 'text', text: 'Seen.' }]);
    expect(response.headers.get('x-gateway-dropped-params')?.split(',')).toEqual([
      'top_k',
      'thinking',
      'cache_control',
      'messages.content.document',
      'tools.web_search_20250305',
    ]);
    const [sent] = h.openaiRequests();
    expect(sent?.body).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.\n\nAnswer in one word.' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
      tools: [{ type: 'function', function: { name: 'lookup' } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(sent?.body).not.toHaveProperty('top_k');
    expect(sent?.body).not.toHaveProperty('thinking');
    expect(h.logs.text()).toContain('request fields dropped for the target');
  });

  it('sends no x-gateway-dropped-params when nothing was dropped', async () => {
    const { response } = await sdk()
      .messages.create({ model: 'standard', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-params')).toBeNull();
  });
});

describe('POST /v1/messages errors', () => {
  it('an unknown key is an authentication_error (401)', async () => {
    const err = await errorOf(
      sdk('gw_live_unknownkey0000000000000000').messages.create({
        model: 'standard',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.status).toBe(401);
    expect((err.error as { error: { type: string } }).error.type).toBe('authentication_error');
  });

  it('a provider still rate limiting is a rate_limit_error (429) with Retry-After', async () => {
    h.openai.set({ status: 429, retryAfter: 7 });
    const err = await errorOf(
      sdk().messages.create({
        model: 'standard',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.headers?.get('retry-after')).toBe('7');
    expect((err.error as { error: { type: string } }).error.type).toBe('rate_limit_error');
  });

  it('an unknown model is a not_found_error (404)', async () => {
    const err = await errorOf(
      sdk().messages.create({ model: 'nope', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('a missing key and a body that is not JSON are answered in Anthropic shape too', async () => {
    const noKey = await fetch(`${url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'missing api key' },
      request_id: expect.stringMatching(UUID),
    });
    const broken = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: '{"model":',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('a body without max_tokens is a 400 naming the field, as Anthropic answers it', async () => {
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({ model: 'standard', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('max_tokens');
  });
});

describe('POST /v1/messages to an Anthropic target (passed through)', () => {
  /**
   * A client's body as its SDK would serialize it (compact JSON), with keys in
   * an unusual order, a system turn, non-ASCII text, a float and a field no
   * version of the API has; the target must get exactly these bytes but `model`.
   */
  const clientBody = (model: string, stream: boolean) =>
    `{"max_tokens":64,"x_future_field":{"a":[1,2.5,null]},"messages":[{"role":"user","content":[{"type":"text","text":"h\u00e9 \\"q\\" ✓","cache_control":{"type":"ephemeral"}}]},{"role":"system","content":"Be brief."}],"model":"${model}","temperature":0.25${stream ? ',"stream":true' : ''},"metadata":{"user_id":"u-1"}}`;

  it.each([false, true])(
    'passes the body and the answer through byte for byte but model (stream: %s)',
    async (stream) => {
      const sent = clientBody('claude', stream);
      const res = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
        body: sent,
      });
      const answer = await res.text();
      expect(res.status).toBe(200);
      const [upstream] = h.anthropicRequests();
      expect(upstream?.rawBody).toBe(clientBody('claude-test-1', stream));
      // What the target wrote, as the client got it (keep-alive comments aside).
      expect(answer.replace(/^: keep-alive\n\n/gm, '')).toBe(upstream?.sent);
      expect(res.headers.get('x-gateway-dropped-params')).toBeNull();
    },
  );

  it('answers with the upstream message and its cache tokens, recorded in usage', async () => {
    h.anthropic.setFor('claude-test-1', {
      content: 'Cached answer.',
      usage: {
        input_tokens: 20,
        output_tokens: 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 3000,
      },
    });
    let message: Anthropic.Message | undefined;
    const events = await recorded(async () => {
      message = await sdk().messages.create({
        model: 'claude',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hello' }],
      });
    });
    expect(message?.content).toEqual([{ type: 'text', text: 'Cached answer.' }]);
    expect(message?.model).toBe('claude-test-1');
    expect(message?.usage).toMatchObject({
      input_tokens: 20,
      output_tokens: 4,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 3000,
    });
    expect(events).toEqual([
      expect.objectContaining({
        endpoint: 'messages',
        provider: 'anthropic',
        model: 'claude-test-1',
        status: 200,
        promptTokens: 3020,
        completionTokens: 4,
        totalTokens: 3024,
        cachedTokens: 3000,
        cacheWriteTokens: 0,
        // 20 x 3 + 3000 x 0.3 + 4 x 15 micro-units.
        costMicros: BigInt(1020),
      }),
    ]);
    const [sent] = h.anthropicRequests();
    expect(sent?.headers['x-api-key']).toBe('sk-ant-server-0007');
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('passes a Claude Code style stream through with cache markers intact and cache tokens recorded', async () => {
    h.anthropic.setFor('claude-test-1', {
      thinking: 'Let me look at the file.',
      toolCalls: [{ name: 'Read', input: { file_path: '/repo/README.md' } }],
      usage: {
        input_tokens: 12,
        output_tokens: 30,
        cache_creation_input_tokens: 48000,
        cache_read_input_tokens: 0,
      },
    });
    const system = [
      { type: 'text' as const, text: "You are Claude Code, Anthropic's official CLI for Claude." },
      {
        type: 'text' as const,
        text: 'Project instructions. '.repeat(8000),
        cache_control: { type: 'ephemeral' as const },
      },
    ];
    const tools = [
      {
        name: 'Read',
        description: 'Reads a file',
        input_schema: { type: 'object' as const, properties: { file_path: { type: 'string' } } },
      },
      {
        name: 'Bash',
        description: 'Runs a command',
        input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } },
        cache_control: { type: 'ephemeral' as const },
      },
    ];
    const messages: Anthropic.MessageParam[] = [
      {
        role: 'user',
        content: [{ type: 'text', text: 'What does the README say?', cache_control: { type: 'ephemeral' } }],
      },
    ];
    const client = new Anthropic({
      apiKey: caller.apiKey,
      baseURL: url,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
    });
    let final: Anthropic.Message | undefined;
    const seen: string[] = [];
    const events = await recorded(async () => {
      const stream = client.messages.stream({
        model: 'claude/claude-test-1',
        max_tokens: 32000,
        system,
        tools,
        messages,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        metadata: { user_id: 'user_abc' },
      });
      stream.on('streamEvent', (e) => seen.push(e.type));
      final = await stream.finalMessage();
    });

    const [sent] = h.anthropicRequests();
    expect(sent?.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(sent?.body).toEqual({
      model: 'claude-test-1',
      max_tokens: 32000,
      stream: true,
      system,
      tools,
      messages,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      metadata: { user_id: 'user_abc' },
    });
    expect(seen).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(final?.content).toEqual([
      { type: 'thinking', thinking: 'Let me look at the file.', signature: 'sig_fake' },
      { type: 'tool_use', id: 'toolu_fake_0', name: 'Read', input: { file_path: '/repo/README.md' } },
    ]);
    expect(final?.stop_reason).toBe('tool_use');
    expect(final?.usage).toMatchObject({ cache_creation_input_tokens: 48000, cache_read_input_tokens: 0 });
    expect(events).toEqual([
      expect.objectContaining({
        endpoint: 'messages-stream',
        provider: 'anthropic',
        status: 200,
        promptTokens: 48012,
        completionTokens: 30,
        cachedTokens: 0,
        cacheWriteTokens: 48000,
        // 12 x 3 + 48000 x 3.75 + 30 x 15 micro-units.
        costMicros: BigInt(180486),
      }),
    ]);
  });

  it("caps the passed-through max_tokens to what the caller's budget has left", async () => {
    const app = h.startInstance({
      AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
      AI_ALLOWED_LANES: 'standard,claude,mixed',
      AI_DAILY_TOKEN_BUDGET: '100',
    });
    h.anthropic.setFor('claude-test-1', { content: 'Short.' });
    const res = await request(app)
      .post('/v1/messages')
      .set('x-api-key', caller.apiKey)
      .send({ model: 'claude', max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const asked = (h.anthropicRequests()[0]?.body as { max_tokens?: number } | undefined)?.max_tokens;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(100);
  });

  it('takes a long agent session: 300 messages and a 100 KB tool result', async () => {
    h.anthropic.setFor('claude-test-1', { content: 'Next step.' });
    const messages: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 150; i += 1) {
      messages.push({ role: 'user', content: `step ${i}` });
      messages.push({ role: 'assistant', content: `ok ${i}` });
    }
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'x'.repeat(100_000) }],
    });
    const message = await sdk().messages.create({ model: 'claude', max_tokens: 100, messages });
    expect(message.content).toEqual([{ type: 'text', text: 'Next step.' }]);
    const sent = h.anthropicRequests()[0]?.body as { messages: unknown[] } | undefined;
    expect(sent?.messages).toHaveLength(301);
  });

  it('sends thinking at once, so a long think is not cut by the attempt timeout', async () => {
    h.anthropic.setFor('claude-test-1', { thinking: 'Hmm.', thinkingPauseMs: 1500, content: 'Done.' });
    const message = await sdk()
      .messages.stream({
        model: 'claude',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'think' }],
      })
      .finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig_fake' },
      { type: 'text', text: 'Done.' },
    ]);
  });

  it("uses the caller's stored Anthropic key (bring your own key) instead of the server's", async () => {
    const stored = await fetch(`${url}/api/v1/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({ provider: 'anthropic', key: 'sk-ant-user-key-000111' }),
    });
    expect(stored.status).toBe(201);
    await sdk().messages.create({
      model: 'claude',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(h.anthropicRequests().map((r) => r.headers['x-api-key'])).toEqual(['sk-ant-user-key-000111']);
  });

  it('falls back from a failing Anthropic target to the OpenAI-compatible one, translating', async () => {
    h.anthropic.setFor('claude-test-2', { status: 529 });
    h.openai.setFor('mix-2', { content: 'From the fallback.' });
    const message = await sdk().messages.create({
      model: 'mixed',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'From the fallback.' }]);
    expect(message.model).toBe('mixed/mix-2');
    // Tried (and retried, as the fallback retries a 5xx once) before moving on.
    const tried = h.anthropicRequests();
    expect(tried.length).toBeGreaterThanOrEqual(1);
    expect(tried.map((r) => r.status)).toEqual(tried.map(() => 529));
  });

  it('names dropped fields only when the translating target answers a mixed lane, streamed too', async () => {
    const body = JSON.stringify({
      model: 'mixed',
      max_tokens: 20,
      top_k: 3,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const post = () =>
      fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
        body,
      });
    const passed = await post();
    await passed.text();
    expect(passed.status).toBe(200);
    expect(passed.headers.get('x-gateway-dropped-params')).toBeNull();
    expect(h.anthropicRequests().at(-1)?.body).toMatchObject({ top_k: 3 });

    h.anthropic.setFor('claude-test-2', { status: 529 });
    const translated = await post();
    await translated.text();
    expect(translated.status).toBe(200);
    expect(translated.headers.get('x-gateway-dropped-params')).toBe('top_k');
    expect(h.openaiRequests().at(-1)?.body).not.toHaveProperty('top_k');
  });

  it('ends a stream cut by the Anthropic target with an error event the SDK raises', async () => {
    h.anthropic.setFor('claude-test-1', { chunks: ['one ', 'two ', 'three'], errorEventAfterChunks: 2 });
    const stream = sdk().messages.stream({
      model: 'claude',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'count' }],
    });
    const err = await errorOf(stream.finalMessage());
    expect((err.error as { error: { type: string } }).error.type).toBe('api_error');
  });
});
