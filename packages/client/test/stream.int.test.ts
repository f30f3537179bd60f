import type { ServerResponse } from 'node:http';
import { type ChatStreamEvent, createGatewayClient, NetworkError, PlatformApiError } from '../src';
import { errorStep, type ScriptedServer, type Step, startScriptedServer } from './scripted-server';

const REQUEST = { lane: 'free', project_id: 'p1', messages: [{ role: 'user' as const, content: 'hello' }] };
const DONE = {
  model_used: 'llama',
  finish_reason: 'stop',
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
};

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(steps: Step[]) {
  const server = await startScriptedServer(steps);
  servers.push(server);
  const client = createGatewayClient({ baseUrl: server.url, apiKey: 'k', retry: { backoffMs: [1, 1, 1] } });
  return { server, client };
}

function openSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/**
 * Writes `text` in pieces of `size` bytes with a real pause between them, so the
 * client sees separate chunks, some of them cutting a UTF-8 sequence in two.
 */
async function writeInPieces(res: ServerResponse, text: string, size: number): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) {
    res.write(bytes.subarray(i, i + size));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A stream step; `closed` resolves when the client has gone away. */
function streamStep(write: (res: ServerResponse) => Promise<void>) {
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const step: Step = {
    handle: async (_req, res) => {
      res.on('close', markClosed);
      openSse(res);
      await write(res);
    },
  };
  return { step, closed };
}

async function collect(iterable: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

describe('chatStream', () => {
  it('parses events split across chunks, multi-line data and keep-alive comments', async () => {
    const body = [
      ': connected\n\n',
      'event: chunk\r\ndata: {"content":"Hel"}\r\n\r\n',
      ': keep-alive\n\n',
      // One JSON object spread over several data lines, joined with LF by the parser.
      'event: chunk\ndata: {\ndata:   "content": "lo, ünïcødé"\ndata: }\n\n',
      'event: future-event\ndata: {}\n\n',
      `event: done\ndata: ${JSON.stringify(DONE)}\n\n`,
    ].join('');
    const { step } = streamStep(async (res) => {
      await writeInPieces(res, body, 3);
      res.end();
    });
    const { client, server } = await setup([step]);
    expect(await collect(client.chatStream(REQUEST))).toEqual([
      { type: 'chunk', data: { content: 'Hel' } },
      { type: 'chunk', data: { content: 'lo, ünïcødé' } },
      { type: 'done', data: DONE },
    ]);
    expect(server.requests[0]!.headers).toMatchObject({ accept: 'text/event-stream', 'x-api-key': 'k' });
    expect(JSON.parse(server.requests[0]!.body)).toEqual(REQUEST);
  });

  it('ends with the error event the gateway sends mid-stream', async () => {
    const error = {
      error: 'upstream AI service timed out',
      request_id: '3f1c2a9e-0b7d-4c8e-9a51-2d6f4b8e7c10',
    };
    const { step } = streamStep(async (res) => {
      res.write('event: chunk\ndata: {"content":"par"}\n\n');
      res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
    });
    const { client } = await setup([step]);
    expect(await collect(client.chatStream(REQUEST))).toEqual([
      { type: 'chunk', data: { content: 'par' } },
      { type: 'error', data: error },
    ]);
  });

  it('reports a stream that ends before done as a network error with its request id', async () => {
    const { step } = streamStep(async (res) => {
      res.end('event: chunk\ndata: {"content":"par"}\n\n');
    });
    const { client, server } = await setup([step]);
    const events: ChatStreamEvent[] = [];
    const error = await (async () => {
      for await (const event of client.chatStream(REQUEST)) events.push(event);
    })().catch((e) => e);
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toBe('stream ended before its done event');
    expect(error.requestId).toBe(server.requests[0]!.headers['x-request-id']);
  });

  it('break in for-await closes the connection', async () => {
    const { step, closed } = streamStep(async (res) => {
      res.write('event: chunk\ndata: {"content":"a"}\n\n');
      // Never ends by itself: only the client can close it.
    });
    const { client } = await setup([step]);
    for await (const event of client.chatStream(REQUEST)) {
      expect(event).toEqual({ type: 'chunk', data: { content: 'a' } });
      break;
    }
    await closed;
  });

  it('return() on the iterator closes the connection', async () => {
    const { step, closed } = streamStep(async (res) => {
      res.write('event: chunk\ndata: {"content":"a"}\n\n');
    });
    const { client } = await setup([step]);
    const stream = client.chatStream(REQUEST);
    expect(await stream.next()).toEqual({ done: false, value: { type: 'chunk', data: { content: 'a' } } });
    expect(await stream.return()).toEqual({ done: true, value: undefined });
    await closed;
  });

  it('the caller signal aborts a running stream with its reason and closes the connection', async () => {
    const { step, closed } = streamStep(async (res) => {
      res.write('event: chunk\ndata: {"content":"a"}\n\n');
    });
    const { client } = await setup([step]);
    const controller = new AbortController();
    const stream = client.chatStream(REQUEST, { signal: controller.signal });
    await stream.next();
    const pending = stream.next();
    controller.abort();
    const error = await pending.catch((e) => e);
    expect(error).toBe(controller.signal.reason);
    await closed;
  });

  it('answers 401 before the stream as PlatformApiError on the first next(), without retry', async () => {
    const { client, server } = await setup([errorStep(401, 'missing api key')]);
    const error = await client
      .chatStream(REQUEST)
      .next()
      .catch((e) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 401, error: 'missing api key', attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 504 before the stream starts, then streams', async () => {
    const { step } = streamStep(async (res) => {
      res.end(`event: done\ndata: ${JSON.stringify(DONE)}\n\n`);
    });
    const { client, server } = await setup([errorStep(504, 'upstream AI service timed out'), step]);
    expect(await collect(client.chatStream(REQUEST))).toEqual([{ type: 'done', data: DONE }]);
    expect(server.requests).toHaveLength(2);
  });

  it('does not send anything until the first next()', async () => {
    const { client, server } = await setup([]);
    const stream = client.chatStream(REQUEST);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.requests).toHaveLength(0);
    await stream.return();
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(server.requests).toHaveLength(0);
  });
});
