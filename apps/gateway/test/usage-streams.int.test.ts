import { createLogger, createMemoryDestination } from '@platform/logging';
import { createGracefulShutdown } from '@platform/service-kit';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { parseSse } from './support/sse';

/**
 * Item 1 of issue 31: a stream that delivered content and then ended for any
 * reason is charged. The fake reports usage only in its last chunk, so each
 * of these streams ends without it: the record must carry the tokenizer's
 * estimate (> 0, `estimated`), never 0.
 */
let h: AiHarness;
let caller: TestCaller;
let url: string;
useAiHarness(
  { AI_STREAM_IDLE_TIMEOUT_MS: '400' },
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

const body = (project: string) =>
  JSON.stringify({
    lane: 'free',
    project_id: project,
    messages: [{ role: 'user', content: 'Tell me a long story about a lighthouse keeper.' }],
  });

function openStream(base: string, project: string, signal?: AbortSignal) {
  return fetch(`${base}/api/v1/ai/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
    body: body(project),
    signal,
  });
}

async function recordOf(requestId: string | null) {
  await h.usage.flush();
  const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
  expect(rows).toHaveLength(1);
  const row = rows[0];
  if (!row) throw new Error('no record');
  if (requestId) expect(row.requestId).toBe(requestId);
  return row;
}

const CHUNKS = ['Once ', 'upon ', 'a ', 'time ', 'there ', 'was ', 'a ', 'keeper.'];

describe('streams that end early are charged an estimate', () => {
  it('client abort after some chunks: 499, estimated prompt and delivered tokens', async () => {
    h.openai.set({ chunks: CHUNKS, chunkDelayMs: 150 });
    const controller = new AbortController();
    const res = await openStream(url, 'abort', controller.signal);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('upon')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await h.waitForOpenaiAbort();
    const row = await recordOf(res.headers.get('x-request-id'));
    expect(row).toEqual(expect.objectContaining({ status: 499, estimated: true, provider: 'groq' }));
    expect(row.promptTokens).toBeGreaterThan(5);
    expect(row.completionTokens).toBeGreaterThanOrEqual(2);
    expect(row.totalTokens).toBe(row.promptTokens + row.completionTokens);
    expect(row.costMicros).toBeGreaterThan(0n);
  });

  it('idle timeout after the first chunk: 504 event, estimated', async () => {
    h.openai.set({ chunks: CHUNKS, chunkDelayMs: 5_000 });
    const res = await openStream(url, 'idle');
    const events = parseSse(await res.text()).events;
    expect(events.at(-1)?.event).toBe('error');
    const row = await recordOf(res.headers.get('x-request-id'));
    expect(row).toEqual(expect.objectContaining({ status: 504, estimated: true }));
    expect(row.completionTokens).toBeGreaterThanOrEqual(1);
    expect(row.totalTokens).toBeGreaterThan(row.completionTokens);
  });

  it('upstream cut after some chunks: 502 event, estimated', async () => {
    h.openai.set({ chunks: CHUNKS, failAfterChunks: 4 });
    const res = await openStream(url, 'cut');
    const events = parseSse(await res.text()).events;
    expect(events.at(-1)?.event).toBe('error');
    expect(events.filter((e) => e.event === 'chunk')).toHaveLength(4);
    const row = await recordOf(res.headers.get('x-request-id'));
    expect(row).toEqual(expect.objectContaining({ status: 502, estimated: true }));
    // Exactly what each of the lane's three targets generated, by the same tokenizer: the two
    // asked to continue by instruction started over (nothing of it reached the caller twice) and
    // were cut too, and every attempt that generated is charged.
    expect(row.completionTokens).toBe(3 * countTokens(CHUNKS.slice(0, 4).join('')));
  });

  it('shutdown after the first chunk: 503 event, estimated', async () => {
    const { url: own, server } = await h.listen(h.startInstance({ AI_STREAM_IDLE_TIMEOUT_MS: '30000' }));
    h.openai.set({ chunks: CHUNKS, chunkDelayMs: 20_000 });
    const shutdown = createGracefulShutdown(server, {
      logger: createLogger({ service: 'gateway', destination: createMemoryDestination() }),
      drainMs: 300,
      onClose: async () => {},
      exit: () => {},
    });
    const res = await openStream(own, 'shutdown');
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    shutdown('SIGTERM');
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      text += new TextDecoder().decode(next.value);
    }
    expect(parseSse(text).events.at(-1)).toEqual({
      event: 'error',
      data: { error: 'service unavailable', request_id: res.headers.get('x-request-id') },
    });
    const row = await recordOf(res.headers.get('x-request-id'));
    expect(row).toEqual(expect.objectContaining({ status: 503, estimated: true }));
    expect(row.completionTokens).toBeGreaterThanOrEqual(1);
  });

  it('a stream that finished reports the provider usage, not an estimate', async () => {
    h.openai.set({ chunks: CHUNKS, usage: { prompt_tokens: 11, completion_tokens: 8 } });
    const res = await openStream(url, 'done');
    expect(parseSse(await res.text()).events.at(-1)?.event).toBe('done');
    const row = await recordOf(res.headers.get('x-request-id'));
    expect(row).toEqual(expect.objectContaining({ status: 200, estimated: false, totalTokens: 19 }));
  });

  it('failed attempts of a fallback chain are not charged: only the answering target', async () => {
    h.openai.setFor('free-a', { status: 500 });
    h.openai.setFor('free-b', { chunks: CHUNKS, usage: { prompt_tokens: 3, completion_tokens: 4 } });
    const res = await openStream(url, 'fallback');
    expect(parseSse(await res.text()).events.at(-1)?.event).toBe('done');
    const row = await recordOf(res.headers.get('x-request-id'));
    expect(row).toEqual(expect.objectContaining({ provider: 'cerebras', model: 'free-b', totalTokens: 7 }));
  });
});
