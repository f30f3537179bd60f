// The gateway exactly as its own integration tests build it: real createApp, the
// openai SDK and ElevenLabs client pointed at the @platform/testing fakes, a fresh
// test database, served on loopback.

import {
  type ChatStreamEvent,
  createGatewayClient,
  type GatewayClient,
  PlatformApiError,
  type RetryEvent,
} from '@platform/client';
import { type AiHarness, startAiHarness, type TestCaller } from '@platform/gateway/testing';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CHAT = {
  lane: 'free',
  project_id: 'client-tests',
  messages: [{ role: 'user' as const, content: 'hi' }],
};
/** The premium lane has one target, so a hang costs one upstream timeout per attempt. */
const PREMIUM = { ...CHAT, lane: 'premium' };

let h: AiHarness;
let url: string;
let caller: TestCaller;
let waits: number[];
let retries: RetryEvent[];
let onWait: () => void;
let gateway: GatewayClient;

beforeAll(async () => {
  h = await startAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '1000' });
  ({ url } = await h.listen());
}, 60_000);
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.resetFakes();
  caller = await h.createCaller();
  waits = [];
  retries = [];
  onWait = () => undefined;
  gateway = createClient(caller.apiKey);
});

/** Backoff waits are recorded instead of slept; `onWait` lets a test change the fakes between attempts. */
function createClient(apiKey: string): GatewayClient {
  return createGatewayClient({
    baseUrl: url,
    apiKey,
    sleep: async (ms) => {
      waits.push(ms);
      onWait();
    },
    onRetry: (event) => retries.push(event),
  });
}

describe('gateway client against the real gateway', () => {
  it('health and me', async () => {
    await expect(gateway.health()).resolves.toMatchObject({ status: 'ok', service: 'gateway' });
    await expect(gateway.me()).resolves.toMatchObject({ id: caller.userId, auth: 'api_key' });
  });

  it('chat returns the completion as the contract describes it', async () => {
    h.openai.set({ content: 'Hello from the fake', usage: { prompt_tokens: 4, completion_tokens: 5 } });
    await expect(gateway.chat(CHAT)).resolves.toEqual({
      content: 'Hello from the fake',
      model_used: 'free-a',
      finish_reason: 'stop',
      usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 },
    });
  });

  it('chatStream yields the chunks, then done', async () => {
    h.openai.set({ chunks: ['Hel', 'lo', '!'], usage: { prompt_tokens: 4, completion_tokens: 3 } });
    const events: ChatStreamEvent[] = [];
    for await (const event of gateway.chatStream(CHAT)) events.push(event);
    expect(events).toEqual([
      { type: 'chunk', data: { content: 'Hel' } },
      { type: 'chunk', data: { content: 'lo' } },
      { type: 'chunk', data: { content: '!' } },
      {
        type: 'done',
        data: {
          model_used: 'free-a',
          finish_reason: 'stop',
          usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
        },
      },
    ]);
  });

  it('leaving a stream early closes it, and the gateway cancels the upstream request', async () => {
    h.openai.set({ chunks: ['a', 'b', 'c', 'd'], chunkDelayMs: 200 });
    for await (const event of gateway.chatStream(PREMIUM)) {
      expect(event).toEqual({ type: 'chunk', data: { content: 'a' } });
      break;
    }
    const aborted = await h.waitForOpenaiAbort((r) => r.model === 'prem-1');
    expect(aborted.aborted).toBe(true);
  });

  it('image, tts, music and soundfx', async () => {
    const image = await gateway.image({ prompt: 'a lighthouse', project_id: 'client-tests' });
    expect(image.images[0]).toMatchObject({ content_type: 'image/png', b64_json: expect.any(String) });

    const speech = await gateway.tts({ text: 'hello', project_id: 'client-tests', format: 'wav' });
    expect(speech.contentType).toMatch(/^audio\/wav/);
    expect(Buffer.from(speech.data.subarray(0, 4)).toString('latin1')).toBe('RIFF');

    for (const audio of [
      await gateway.music({ prompt: 'calm piano', project_id: 'client-tests', duration_seconds: 5 }),
      await gateway.soundfx({ prompt: 'door creaks', project_id: 'client-tests' }),
    ]) {
      expect(audio.contentType).toMatch(/^audio\/mpeg/);
      expect(audio.data.byteLength).toBeGreaterThan(0);
    }
  });

  it('stores, lists and deletes a provider key', async () => {
    const stored = await gateway.keys.put({ provider: 'groq', key: 'gsk_client_test_key_9876' });
    expect(stored).toMatchObject({ provider: 'groq', last4: '9876' });
    await expect(gateway.keys.list()).resolves.toEqual([stored]);
    await expect(gateway.keys.delete('groq')).resolves.toBeUndefined();
    await expect(gateway.keys.list()).resolves.toEqual([]);
    const missing = await gateway.keys.delete('groq').catch((e) => e);
    expect(missing).toMatchObject({ status: 404, attempts: 1 });
  });

  it('usage reports the requests of the day', async () => {
    const today = () => new Date().toISOString().slice(0, 10);
    const from = today();
    h.openai.set({ usage: { prompt_tokens: 2, completion_tokens: 3 } });
    await gateway.chat({ ...CHAT, project_id: 'usage-probe' });
    await h.usage.flush();
    // from/to bracket the call, so a run across midnight UTC still finds its row.
    const { usage } = await gateway.usage({ from, to: today(), project_id: 'usage-probe' });
    expect(usage).toEqual([
      expect.objectContaining({ project_id: 'usage-probe', requests: 1, total_tokens: 5 }),
    ]);
  });
});

describe('the retry policy against the real gateway', () => {
  it('401 invalid api key is reported at once', async () => {
    const error = await createClient('gw_not_a_real_key_0000000000')
      .chat(CHAT)
      .catch((e) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 401, error: 'invalid api key', attempts: 1 });
    expect(error.requestId).toMatch(UUID);
    expect(waits).toEqual([]);
  });

  it('a spec validation error is reported at once with its exact string', async () => {
    const error = await gateway.chat({ ...CHAT, messages: [] }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, error: 'messages cannot be empty', attempts: 1 });
  });

  it('504 upstream AI service timed out is retried after 2 s, 4 s, 8 s and then reported', async () => {
    h.openai.set({ hang: true });
    const error = await gateway.chat(PREMIUM).catch((e) => e);
    expect(error).toMatchObject({ status: 504, error: 'upstream AI service timed out', attempts: 4 });
    expect(waits).toEqual([2000, 4000, 8000]);
    expect(error.requestIds).toHaveLength(4);
    for (const id of error.requestIds) expect(id).toMatch(UUID);
    expect(new Set(error.requestIds).size).toBe(4);
    expect(h.openaiRequests().filter((r) => r.model === 'prem-1')).toHaveLength(4);
  });

  it('a 504 followed by an answer gives the answer', async () => {
    h.openai.set({ hang: true });
    onWait = () => h.openai.set({ content: 'second time lucky' });
    await expect(gateway.chat(PREMIUM)).resolves.toMatchObject({ content: 'second time lucky' });
    expect(retries).toEqual([
      expect.objectContaining({ status: 504, error: 'upstream AI service timed out' }),
    ]);
  });

  it('a 429 waits the gateway’s Retry-After before the next attempt', async () => {
    h.openai.set({ status: 429, retryAfter: 7 });
    onWait = () => h.resetFakes();
    await expect(gateway.chat(PREMIUM)).resolves.toMatchObject({ model_used: 'prem-1' });
    expect(waits).toEqual([7000]);
    expect(retries[0]).toMatchObject({ status: 429, error: 'rate_limited' });
  });

  it('a stream whose start times out is retried, then streams', async () => {
    h.openai.set({ hang: true });
    onWait = () => h.openai.set({ chunks: ['ok'] });
    const events: ChatStreamEvent[] = [];
    for await (const event of gateway.chatStream(PREMIUM)) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['chunk', 'done']);
    expect(waits).toEqual([2000]);
  });
});
