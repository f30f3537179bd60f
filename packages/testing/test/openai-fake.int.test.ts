import OpenAI from 'openai';
import { type OpenAIFake, startOpenAIFake } from '../src/openai-fake';

let fake: OpenAIFake;
let client: OpenAI;

beforeEach(async () => {
  fake = await startOpenAIFake();
  client = new OpenAI({ apiKey: 'sk-test-key-1234', baseURL: fake.baseURL, maxRetries: 0 });
});
afterEach(() => fake.close());

type ApiError = InstanceType<typeof OpenAI.APIError>;

const ask = { model: 'gpt-fake', messages: [{ role: 'user' as const, content: 'Say hi' }] };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('chat completions', () => {
  test('non-stream reply carries content, model and usage; the request is logged with its key', async () => {
    fake.set({ content: 'Hi there', usage: { prompt_tokens: 7, completion_tokens: 2 } });
    const completion = await client.chat.completions.create(ask);
    expect(completion.choices[0]?.message.content).toBe('Hi there');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.model).toBe('gpt-fake');
    expect(completion.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
    const [request] = fake.requests;
    expect(request?.headers.authorization).toBe('Bearer sk-test-key-1234');
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.body).toMatchObject({
      model: 'gpt-fake',
      messages: [{ role: 'user', content: 'Say hi' }],
    });
    expect(request?.completed).toBe(true);
    expect(request?.aborted).toBe(false);
  });

  test('stream yields the scripted chunks and a final usage chunk with include_usage', async () => {
    fake.set({ chunks: ['Hel', 'lo', '!'], usage: { completion_tokens: 3 } });
    const stream = await client.chat.completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toEqual(['Hel', 'lo', '!']);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(3);
  });

  test('the SSE wire format matches OpenAI, ending with [DONE]', async () => {
    fake.set({ chunks: ['a'] });
    const response = await fetch(`${fake.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask, stream: true }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const first = JSON.parse(events[0]?.slice('data: '.length) ?? '{}');
    expect(first).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [{ delta: { role: 'assistant' } }],
    });
    expect(first).not.toHaveProperty('usage');
  });

  test('failing mid-stream makes the SDK iteration throw after the first chunks', async () => {
    fake.set({ chunks: ['one ', 'two ', 'three'], failAfterChunks: 1 });
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    );
    // undici's "terminated" TypeError comes from another realm in Jest, so match by message.
    expect(String(error)).toMatch(/terminated|other side closed/);
    expect(seen.join('')).toBe('one ');
    expect(fake.requests[0]?.destroyedByFake).toBe(true);
    expect(fake.requests[0]?.aborted).toBe(false);
  });

  test('scripted errors: 429 with retry-after, per-model 500, queue consumed in order', async () => {
    fake.enqueue({ status: 429, retryAfter: 7 });
    fake.setFor('broken-model', { status: 500 });
    const limited = (await rejection(client.chat.completions.create(ask))) as ApiError;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('7');
    expect(limited.code).toBe('rate_limit_exceeded');
    const broken = await rejection(client.chat.completions.create({ ...ask, model: 'broken-model' }));
    expect(broken).toBeInstanceOf(OpenAI.InternalServerError);
    await expect(client.chat.completions.create(ask)).resolves.toMatchObject({ object: 'chat.completion' });
  });

  test('unknown key and unknown model get OpenAI-shaped 401 and 404', async () => {
    const strict = await startOpenAIFake({ apiKeys: ['sk-good'], models: ['gpt-fake'] });
    try {
      const bad = new OpenAI({ apiKey: 'sk-bad-key-999', baseURL: strict.baseURL, maxRetries: 0 });
      const auth = (await rejection(bad.chat.completions.create(ask))) as ApiError;
      expect(auth).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(auth.code).toBe('invalid_api_key');
      const good = new OpenAI({ apiKey: 'sk-good', baseURL: strict.baseURL, maxRetries: 0 });
      const missing = (await rejection(
        good.chat.completions.create({ ...ask, model: 'gpt-nope' }),
      )) as ApiError;
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
      expect(missing.code).toBe('model_not_found');
    } finally {
      await strict.close();
    }
  });

  test('abort via AbortController is recorded and waitForAbort resolves', async () => {
    fake.set({ hang: true });
    const controller = new AbortController();
    const call = client.chat.completions.create(ask, { signal: controller.signal });
    await fake.waitForRequest();
    controller.abort();
    expect(await rejection(call)).toBeInstanceOf(OpenAI.APIUserAbortError);
    const aborted = await fake.waitForAbort();
    expect(aborted.aborted).toBe(true);
    expect(aborted.abortedAt).toBeGreaterThanOrEqual(aborted.receivedAt);
  });

  test('a client timeout during latency surfaces as a connection error and an abort', async () => {
    fake.set({ latencyMs: 5000 });
    const error = await rejection(client.chat.completions.create(ask, { timeout: 150 }));
    // Inside Jest the timeout arrives as the base class (see TOOLCHAIN pitfalls).
    expect(error).toBeInstanceOf(OpenAI.APIConnectionError);
    const aborted = await fake.waitForAbort();
    expect(aborted.status).toBeUndefined();
  });

  test('streams abort mid-way when the client stops reading', async () => {
    fake.set({ chunks: ['a', 'b', 'c', 'd'], chunkDelayMs: 200 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { ...ask, stream: true },
      { signal: controller.signal },
    );
    const seen: string[] = [];
    // The SDK ends the iteration quietly when its own signal aborts it.
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (content) seen.push(content);
      if (seen.length === 1) controller.abort();
    }
    expect(seen).toEqual(['a']);
    expect((await fake.waitForAbort()).status).toBe(200);
  });
});

describe('images and speech', () => {
  test('image generation returns a valid PNG as b64_json', async () => {
    const result = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat', n: 2 });
    expect(result.data).toHaveLength(2);
    const png = Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  });

  test('speech returns audio bytes with the content type of the response_format', async () => {
    const mp3 = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello' });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await mp3.arrayBuffer());
    expect(bytes[0]).toBe(0xff);
    const wav = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input: 'hello',
      response_format: 'wav',
    });
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await wav.arrayBuffer())
        .subarray(0, 4)
        .toString('ascii'),
    ).toBe('RIFF');
  });

  test('missing required fields are a 400 naming the parameter', async () => {
    const error = (await rejection(
      client.audio.speech.create({ model: 'tts-1', voice: 'alloy' } as OpenAI.Audio.SpeechCreateParams),
    )) as ApiError;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('input');
  });
});
