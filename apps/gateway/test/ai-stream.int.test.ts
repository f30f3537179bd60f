import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { parseSse } from './support/sse';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let h: AiHarness;
let url: string;
let caller: TestCaller;
useAiHarness(
  {
    AI_UPSTREAM_TIMEOUT_MS: '1500',
    AI_STREAM_IDLE_TIMEOUT_MS: '1000',
    AI_STREAM_KEEPALIVE_MS: '50',
  },
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

const body = { lane: 'free', project_id: 'proj-s', messages: [{ role: 'user', content: 'hi' }] };

function stream(payload: unknown = body, signal?: AbortSignal) {
  return fetch(`${url}/api/v1/ai/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
    body: JSON.stringify(payload),
    ...(signal ? { signal } : {}),
  });
}

describe('POST /api/v1/ai/chat/stream', () => {
  it('streams chunk events and ends with done', async () => {
    h.openai.set({ chunks: ['Hel', 'lo'], usage: { prompt_tokens: 4, completion_tokens: 2 } });
    const res = await stream();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events } = parseSse(await res.text());
    expect(events).toEqual([
      { event: 'chunk', data: { content: 'Hel' } },
      { event: 'chunk', data: { content: 'lo' } },
      {
        event: 'done',
        data: {
          model_used: 'free-a',
          finish_reason: 'stop',
          usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
        },
      },
    ]);
    expect(h.openaiRequests()[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('falls back before the first chunk, so the caller sees only the answering target', async () => {
    h.openai.setFor('free-a', { status: 503 });
    h.openai.setFor('free-b', { hang: true });
    h.openai.setFor('free-c', { chunks: ['ok'] });
    const res = await stream();
    const { events } = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(['chunk', 'done']);
    expect(events[1]?.data).toMatchObject({ model_used: 'free-c' });
  });

  it('answers JSON errors before the stream starts (validation, all targets timed out)', async () => {
    const invalid = await stream({ ...body, messages: [] });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({
      error: 'messages cannot be empty',
      code: 'messages_empty',
      request_id: expect.stringMatching(UUID),
    });

    h.openai.set({ hang: true });
    const timedOut = await stream();
    expect(timedOut.status).toBe(504);
    expect(timedOut.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await timedOut.json()).toEqual({
      error: 'upstream AI service timed out',
      code: 'upstream_timeout',
      request_id: expect.stringMatching(UUID),
    });
  });

  it('a stream that fails midway on every target ends with an error event naming the first cut', async () => {
    h.openai.set({ chunks: ['a', 'b', 'c'], failAfterChunks: 2 });
    const res = await stream();
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const { events } = parseSse(await res.text());
    // The other two targets, asked by instruction, start over and break too: nothing is sent twice.
    const cause = 'the stream from groq/free-a was cut; no target was left to continue it';
    expect(events).toEqual([
      { event: 'chunk', data: { content: 'a' } },
      { event: 'chunk', data: { content: 'b' } },
      { event: 'error', data: { error: 'upstream AI service error', request_id: requestId, cause } },
    ]);
    expect(requestId).toMatch(UUID);
  });

  it('a stream silent for longer than the idle timeout ends with a timeout error event and is aborted upstream', async () => {
    h.openai.set({ chunks: ['a', 'b'], chunkDelayMs: 3000 });
    const res = await stream();
    const { events } = parseSse(await res.text());
    expect(events).toEqual([
      { event: 'chunk', data: { content: 'a' } },
      {
        event: 'error',
        data: {
          error: 'upstream AI service timed out',
          request_id: expect.stringMatching(UUID),
          cause: 'the stream from groq/free-a stalled; no target was left to continue it',
        },
      },
    ]);
    await h.waitForOpenaiAbort();
  });

  it('sends keep-alive comments while waiting between chunks', async () => {
    h.openai.set({ chunks: ['a', 'b'], chunkDelayMs: 250 });
    const res = await stream();
    const { events, comments } = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(['chunk', 'chunk', 'done']);
    expect(comments).toBeGreaterThan(0);
  });

  it('a client that disconnects mid-stream aborts the upstream request', async () => {
    h.openai.set({ chunks: ['a', 'b', 'c', 'd'], chunkDelayMs: 200 });
    const controller = new AbortController();
    const res = await stream(body, controller.signal);
    const reader = res.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toContain('event: chunk');
    controller.abort();
    const aborted = await h.waitForOpenaiAbort();
    expect(aborted.aborted).toBe(true);
    expect(aborted.completed).toBe(false);
  });
});
