import { createLogger, createMemoryDestination } from '@platform/logging';
import { createGracefulShutdown } from '@platform/service-kit';
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
});
