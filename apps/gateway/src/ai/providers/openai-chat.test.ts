import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LoopbackServer, listenLoopback, readBody } from '@platform/testing';
import { type ChatUpstream, createChatUpstream } from './openai-chat';
import { classifyUpstreamError, UpstreamHttpError, UpstreamProtocolError } from './upstream-errors';

// The pooled chat client against a scripted raw HTTP server: what it sends,
// how it reads split SSE, and which errors the fallback sees.
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: LoopbackServer;
let handler: Handler;
let client: ChatUpstream;

beforeAll(async () => {
  server = await listenLoopback(async (req, res) => handler(req, (await readBody(req)).toString(), res));
  client = createChatUpstream(`${server.url}/v1/`, 'sk-test-key');
});

afterAll(async () => {
  await client.close();
  await server.close();
});

const never = new AbortController().signal;
const chunk = (content: string, extra: object = {}) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })}\r\n\r\n`;

describe('chat upstream client', () => {
  it('posts the JSON body with the Bearer key to {baseURL}/chat/completions', async () => {
    let seen: { url?: string; auth?: string; type?: string; body?: string } = {};
    handler = (req, body, res) => {
      seen = { url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }], usage: null }),
      );
    };
    const answer = await client.complete({ model: 'm', messages: [] }, never);
    expect(answer.choices[0]?.message.content).toBe('hi');
    expect(seen).toEqual({
      url: '/v1/chat/completions',
      auth: 'Bearer sk-test-key',
      type: 'application/json',
      body: '{"model":"m","messages":[]}',
    });
  });

  it('reads SSE split at arbitrary points, CRLF or LF, ignoring comments, until [DONE]', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const text = `: comment\n\n${chunk('a')}${chunk('b')}data: {"choices":[],"usage":{"total_tokens":3}}\n\ndata: [DONE]\n\n`;
      // One byte at a time for the first 40 bytes, then the rest.
      for (let i = 0; i < 40; i += 1) res.write(text[i]);
      res.end(text.slice(40));
    };
    const seen: unknown[] = [];
    for await (const c of await client.stream({ model: 'm' }, never))
      seen.push(c.choices[0]?.delta?.content ?? c.usage);
    expect(seen).toEqual(['a', 'b', { total_tokens: 3 }]);
  });

  it('a non-2xx answer is an UpstreamHttpError with status and Retry-After', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' });
      res.end('{"error":{"message":"slow down"}}');
    };
    const err = await client.complete({}, never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect(classifyUpstreamError(err, { timedOut: false, clientGone: false })).toEqual({
      outcome: 'rate_limited',
      status: 429,
      retryAfter: '7',
    });
  });

  it('an unreadable 200 body or an error event mid-stream is a server_error', async () => {
    handler = (_req, _body, res) => res.end('not json');
    const bad = await client.complete({}, never).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(UpstreamProtocolError);
    expect(classifyUpstreamError(bad, { timedOut: false, clientGone: false }).outcome).toBe('server_error');

    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk('a')}data: {"error":{"message":"overloaded"}}\n\n`);
    };
    const iterator = await client.stream({}, never);
    await expect(iterator.next()).resolves.toMatchObject({ done: false });
    await expect(iterator.next()).rejects.toBeInstanceOf(UpstreamProtocolError);
  });

  it('aborting the signal cancels the request and closes its connection', async () => {
    let closed: Promise<void> = Promise.resolve();
    let arrived: () => void = () => {};
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    handler = (req) => {
      closed = new Promise((resolve) => req.socket.once('close', () => resolve()));
      arrived();
    };
    const controller = new AbortController();
    const pending = client.complete({}, controller.signal).catch((e: unknown) => e);
    await requestArrived;
    controller.abort();
    const err = await pending;
    expect(classifyUpstreamError(err, { timedOut: true, clientGone: false }).outcome).toBe('timeout');
    await closed;
  });

  it('a refused connection is a connection_error', async () => {
    const dead = createChatUpstream('http://127.0.0.1:1/v1', 'k');
    const err = await dead.complete({}, never).catch((e: unknown) => e);
    expect(classifyUpstreamError(err, { timedOut: false, clientGone: false }).outcome).toBe(
      'connection_error',
    );
    await dead.close();
  });
});
