import {
  type AnthropicFake,
  type CommonBehaviour,
  type OpenAIFake,
  startAnthropicFake,
  startOpenAIFake,
} from '@platform/testing';
import { createAnthropicUpstream } from './anthropic';
import { type ChatUpstream, createChatUpstream } from './openai-chat';
import { createResponsesUpstream } from './openai-responses';
import { classifyUpstreamError } from './upstream-errors';

// The contract every upstream chat client keeps, whatever API it speaks: the
// fallback and the relay rely on it (one answer in the chat shape, a stream of
// chunks, failures the fallback can classify). One case file, run for each
// client against its provider's fake in @platform/testing.

type Fake = (OpenAIFake | AnthropicFake) & { enqueue(...b: CommonBehaviour[]): void };

type Client = {
  name: string;
  start(): Promise<Fake>;
  connect(fake: Fake): ChatUpstream;
  /** Scripts the provider's answer text (plain and streamed). */
  answer(text: string, chunks: string[]): object;
};

const CLIENTS: Client[] = [
  {
    name: 'OpenAI-compatible',
    start: startOpenAIFake,
    connect: (fake) => createChatUpstream((fake as OpenAIFake).baseURL, 'sk-contract'),
    answer: (content, chunks) => ({ content, chunks }),
  },
  {
    name: 'OpenAI-compatible with Responses',
    start: startOpenAIFake,
    connect: (fake) => {
      const base = (fake as OpenAIFake).baseURL;
      return createChatUpstream(base, 'sk-contract', createResponsesUpstream(base, 'sk-contract'));
    },
    answer: (content, chunks) => ({ content, chunks }),
  },
  {
    name: 'Anthropic',
    start: startAnthropicFake,
    connect: (fake) => createAnthropicUpstream((fake as AnthropicFake).apiBase, 'sk-ant-contract'),
    answer: (content, chunks) => ({ content, chunks }),
  },
];

const REQUEST = {
  model: 'contract-model',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Say hello.' }],
};

/** A stream's request: the caller (the relay) sets `stream` and asks for the usage. */
const STREAM = { ...REQUEST, stream: true, stream_options: { include_usage: true } };

const open = () => new AbortController().signal;

/** What the fallback makes of a failed call. */
async function failureOf(call: () => Promise<unknown>, flags = { timedOut: false, clientGone: false }) {
  try {
    await call();
  } catch (err) {
    return classifyUpstreamError(err, flags);
  }
  throw new Error('the call did not fail');
}

describe.each(CLIENTS)('upstream contract: $name', (client) => {
  let fake: Fake;
  let upstream: ChatUpstream;

  beforeAll(async () => {
    fake = await client.start();
    upstream = client.connect(fake);
  });
  afterAll(async () => {
    await upstream.close();
    await fake.close();
  });
  afterEach(() => fake.reset());

  it('answers a completion in the chat shape: text, finish reason, usage', async () => {
    fake.enqueue(client.answer('Hello there.', ['Hello', ' there.']));
    const answer = await upstream.complete(REQUEST, open());
    expect(answer.choices[0]?.message.content).toBe('Hello there.');
    expect(answer.choices[0]?.finish_reason).toBe('stop');
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(answer.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('streams the text as chunks in order, ending with the usage', async () => {
    fake.enqueue(client.answer('Hello there.', ['Hel', 'lo', ' there.']));
    const stream = await upstream.stream(STREAM, open());
    let text = '';
    let usage: unknown = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello there.');
    expect(usage).toEqual(expect.objectContaining({ completion_tokens: expect.any(Number) }));
  });

  it('a 429 is rate_limited with its Retry-After', async () => {
    fake.enqueue({ status: 429, retryAfter: 7 });
    const failure = await failureOf(() => upstream.complete(REQUEST, open()));
    expect(failure).toEqual(
      expect.objectContaining({ outcome: 'rate_limited', status: 429, retryAfter: '7' }),
    );
  });

  it('a 5xx is a server_error with its status, for completions and streams', async () => {
    fake.enqueue({ status: 500 }, { status: 500 });
    expect(await failureOf(() => upstream.complete(REQUEST, open()))).toEqual(
      expect.objectContaining({ outcome: 'server_error', status: 500 }),
    );
    expect(await failureOf(() => upstream.stream(STREAM, open()))).toEqual(
      expect.objectContaining({ outcome: 'server_error', status: 500 }),
    );
  });

  it('a refused key is provider_refused, not a reason to retry elsewhere with the same key', async () => {
    fake.enqueue({ status: 401 });
    expect(await failureOf(() => upstream.complete(REQUEST, open()))).toEqual(
      expect.objectContaining({ outcome: 'provider_refused', status: 401 }),
    );
  });

  it('a connection reset is a connection_error', async () => {
    fake.enqueue({ reset: true });
    expect(await failureOf(() => upstream.complete(REQUEST, open()))).toEqual(
      expect.objectContaining({ outcome: 'connection_error' }),
    );
  });

  it('an abort ends a hanging call, read as timeout or client gone as the caller says', async () => {
    fake.enqueue({ hang: true }, { hang: true });
    // Each abort waits until the fake holds its request. An abort that beat the request there
    // (50 ms on a loaded machine) left its hang queued, and the next test's request took it while
    // that test's own behaviour went to the late one: the cut stream then came whole.
    const seen = fake.requests.length;
    const abortOnceHeld = (controller: AbortController, held: number) =>
      void (async () => {
        while (fake.requests.length < seen + held) await new Promise((r) => setTimeout(r, 5));
        controller.abort();
      })();
    const timer = new AbortController();
    abortOnceHeld(timer, 1);
    expect(
      await failureOf(() => upstream.complete(REQUEST, timer.signal), { timedOut: true, clientGone: false }),
    ).toEqual(expect.objectContaining({ outcome: 'timeout' }));
    const gone = new AbortController();
    abortOnceHeld(gone, 2);
    expect(
      await failureOf(() => upstream.stream(STREAM, gone.signal), { timedOut: false, clientGone: true }),
    ).toEqual(expect.objectContaining({ outcome: 'aborted' }));
  });

  it('a stream cut mid-way fails its reader instead of ending as if complete', async () => {
    fake.enqueue({
      ...client.answer('one two three four', ['one', ' two', ' three', ' four']),
      failAfterChunks: 2,
    });
    const stream = await upstream.stream(STREAM, open());
    const read = async () => {
      for await (const _chunk of stream) {
        // drained
      }
    };
    await expect(read()).rejects.toThrow();
  });
});
