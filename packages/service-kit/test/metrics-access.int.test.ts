import { createServer, type Server } from 'node:http';
import os from 'node:os';
import { errorHandler } from '@platform/errors';
import { requestId } from '@platform/logging';
import express from 'express';
import { metricsAccess } from '../src';

const TOKEN = 'metrics-token-0123456789';

/** A non-loopback address of this machine, to reach the server as a remote client would. */
const outsideAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

async function start(token: string | undefined): Promise<{ server: Server; port: number }> {
  const app = express();
  app.use(requestId());
  app.get('/metrics', metricsAccess(token), (_req, res) => {
    res.type('text/plain').send('# metrics\n');
  });
  app.use(errorHandler());
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

async function get(host: string, port: number, headers: Record<string, string> = {}) {
  const res = await fetch(`http://${host}:${port}/metrics`, { headers });
  return { status: res.status, text: await res.text() };
}

describe('GET /metrics access', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('without METRICS_TOKEN: loopback only, and not through a proxy', async () => {
    const { server, port } = await start(undefined);
    servers.push(server);
    expect((await get('127.0.0.1', port)).status).toBe(200);
    const proxied = await get('127.0.0.1', port, { 'x-forwarded-for': '203.0.113.9' });
    expect(proxied.status).toBe(404);
    expect(JSON.parse(proxied.text)).toEqual({
      error: 'not found',
      code: 'not_found',
      request_id: expect.any(String),
    });
    if (outsideAddress) expect((await get(outsideAddress, port)).status).toBe(404);
  });

  it('with METRICS_TOKEN: only the bearer token, from anywhere', async () => {
    const { server, port } = await start(TOKEN);
    servers.push(server);
    expect((await get('127.0.0.1', port)).status).toBe(404);
    expect((await get('127.0.0.1', port, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(
      404,
    );
    expect((await get('127.0.0.1', port, { authorization: TOKEN })).status).toBe(404);
    const ok = await get('127.0.0.1', port, { authorization: `Bearer ${TOKEN}` });
    expect(ok).toEqual({ status: 200, text: '# metrics\n' });
    if (outsideAddress)
      expect((await get(outsideAddress, port, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });
});
