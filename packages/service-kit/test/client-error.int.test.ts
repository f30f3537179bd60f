import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { answerClientError } from '../src/server';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let server: Server;
let port: number;

beforeAll(async () => {
  const app = express();
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  server = createServer(app);
  // As runServer wires it.
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Sends raw bytes and returns what the server wrote before closing the connection. */
function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.end(bytes);
  });
}

describe("requests Node's parser refuses get the JSON error contract", () => {
  it('answers a control byte in a header value with 400 {error, request_id}', async () => {
    const res = await raw('GET /ok HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(res.body);
    expect(body).toEqual({
      error: 'bad request',
      code: 'bad_request',
      request_id: expect.stringMatching(UUID),
    });
    expect(res.headers['x-request-id']).toBe(body.request_id);
    expect(res.headers.connection).toBe('close');
  });

  it('answers a request line over 16 kB with 431 {error, request_id}', async () => {
    const res = await raw(`GET /ok?q=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({
      error: 'request header fields too large',
      code: 'header_fields_too_large',
      request_id: expect.stringMatching(UUID),
    });
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  });

  it('answers a malformed request line with 400 JSON, and still serves good requests', async () => {
    const res = await raw('NOT A REQUEST\r\n\r\n');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toBe('bad request');
    const ok = await raw('GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
  });
});
