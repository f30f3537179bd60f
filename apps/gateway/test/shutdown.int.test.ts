import { createLogger, createMemoryDestination } from '@platform/logging';
import { createGracefulShutdown } from '@platform/service-kit';
import type { RecordedRequest } from '@platform/testing';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';
import { parseSse } from './support/sse';

/**
 * SIGTERM with work in flight (the routine runServer installs, with a spy for
 * process.exit): a plain request finishes normally; a stream still open at the
 * drain deadline gets a final `event: error` with `{error, request_id}` before
 * its connection is closed; then the clients close and the process exits 0.
 */
let h: AiHarness;
let caller: TestCaller;

beforeAll(async () => {
  h = await startAiHarness();
  caller = await h.createCaller();
});
afterAll(() => h.close());

const chat = { lane: 'free', project_id: 'p1', messages: [{ role: 'user', content: 'hi' }] };
/** The prompt of the silent-provider test, to tell its upstream requests from earlier ones. */
const SILENT = 'are you there?';

describe('graceful shutdown', () => {
  it('completes a plain request in flight and ends an open stream with event: error', async () => {
    const { url, server } = await h.listen(h.startInstance());
    // The stream sends one chunk, then stays silent far beyond the drain deadline.
    h.openai.setFor('free-a', { chunks: ['first ', 'never sent'], chunkDelayMs: 20_000 });
    // A plain completion that takes longer than the moment SIGTERM arrives, but less than the deadline.
    h.openai.setFor('std-1', { content: 'plain answer', latencyMs: 300 });

    const logs = createMemoryDestination();
    let exitCode: number | undefined;
    let clientsClosed = false;
    const shutdown = createGracefulShutdown(server, {
      logger: createLogger({ service: 'gateway', destination: logs }),
      drainMs: 800,
      onClose: async () => {
        clientsClosed = true;
      },
      exit: (code) => {
        exitCode = code;
      },
    });

    const streamRes = await fetch(`${url}/api/v1/ai/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify(chat),
    });
    expect(streamRes.status).toBe(200);
    const reader = streamRes.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('first ');

    const plain = fetch(`${url}/api/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({ ...chat, lane: 'standard' }),
    });
    await h.waitForOpenaiRequest((r) => (r.body as { model?: string }).model === 'std-1');
    shutdown('SIGTERM');

    const plainRes = await plain;
    expect(plainRes.status).toBe(200);
    expect(((await plainRes.json()) as { content: string }).content).toBe('plain answer');

    let rest = new TextDecoder().decode(first.value);
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      rest += new TextDecoder().decode(next.value);
    }
    const { events } = parseSse(rest);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { error: 'service unavailable', request_id: streamRes.headers.get('x-request-id') },
    });
    expect(rest).not.toContain('never sent');

    await new Promise<void>((resolve) => server.once('close', () => resolve()));
    await new Promise((r) => setImmediate(r));
    expect(clientsClosed).toBe(true);
    expect(exitCode).toBe(0);
  }, 20_000);

  it('answers requests still waiting for a silent provider 503 with Retry-After and aborts the provider calls', async () => {
    const { url, server } = await h.listen(h.startInstance());
    // Both lanes' first targets never answer: a plain completion and a stream before its first chunk.
    h.openai.setFor('std-1', { hang: true });
    h.openai.setFor('free-a', { hang: true });
    let exitCode: number | undefined;
    const shutdown = createGracefulShutdown(server, {
      logger: createLogger({ service: 'gateway', destination: createMemoryDestination() }),
      drainMs: 500,
      onClose: async () => {},
      exit: (code) => {
        exitCode = code;
      },
    });
    const send = (path: string, lane: string) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
        body: JSON.stringify({ ...chat, lane, messages: [{ role: 'user', content: SILENT }] }),
      });
    const plain = send('/api/v1/ai/chat/completions', 'standard');
    const stream = send('/api/v1/ai/chat/stream', 'free');
    // Only this test's requests (the fake keeps earlier tests' ones too).
    const ours = (model: string) => (r: RecordedRequest) => {
      const body = r.body as { model?: string; messages?: Array<{ content?: unknown }> };
      return body.model === model && body.messages?.[0]?.content === SILENT;
    };
    await h.waitForOpenaiRequest(ours('std-1'));
    await h.waitForOpenaiRequest(ours('free-a'));
    shutdown('SIGTERM');

    for (const res of await Promise.all([plain, stream])) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual({
        error: 'service unavailable',
        code: 'service_unavailable',
        request_id: res.headers.get('x-request-id'),
      });
    }
    // The provider saw both calls aborted, instead of holding them until the process died.
    await h.openai.waitForAbort(ours('std-1'), 3000);
    await h.openai.waitForAbort(ours('free-a'), 3000);

    await new Promise<void>((resolve) =>
      server.listening ? server.once('close', () => resolve()) : resolve(),
    );
    await new Promise((r) => setImmediate(r));
    expect(exitCode).toBe(0);
    h.openai.reset();
  }, 20_000);
});
