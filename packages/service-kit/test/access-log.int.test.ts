import { AppError, errorHandler, notFoundHandler } from '@platform/errors';
import { createLogger, createMemoryDestination } from '@platform/logging';
import request from 'supertest';
import { createServiceApp } from '../src';

type Line = {
  level: string;
  msg: string;
  req?: { remoteAddress?: string };
  res?: { statusCode: number };
  err?: { stack?: string };
};

function buildApp(trustProxyHops: number) {
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'test', destination: logs });
  const { app } = createServiceApp({ service: 'test', logger, trustProxyHops });
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/timeout', () => {
    throw new AppError('upstream_timeout');
  });
  app.get('/unavailable', () => {
    throw new AppError('service_unavailable');
  });
  app.get('/boom', () => {
    throw new Error('a defect');
  });
  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));
  const lines = () => logs.lines.map((l) => JSON.parse(l) as Line);
  return { app, lines };
}

/** The access-log line of the one request sent (written on 'close', so wait for it). */
async function accessLine(lines: () => Line[]): Promise<Line> {
  for (let i = 0; i < 100; i++) {
    const line = lines().find((l) => l.res !== undefined);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no access-log line');
}

describe('access log', () => {
  it("records the client address behind the trusted proxy, not the proxy's", async () => {
    const { app, lines } = buildApp(1);
    await request(app).get('/ok').set('x-forwarded-for', '203.0.113.7');
    expect((await accessLine(lines)).req?.remoteAddress).toBe('203.0.113.7');
  });

  it('records the socket address when no proxy is trusted', async () => {
    const { app, lines } = buildApp(0);
    await request(app).get('/ok').set('x-forwarded-for', '203.0.113.7');
    expect((await accessLine(lines)).req?.remoteAddress).toMatch(/127\.0\.0\.1|::1/);
  });
});

describe('log levels of 5xx answers', () => {
  it.each(['/timeout', '/unavailable'])(
    '%s (expected 504/503) logs at warn without a stack',
    async (path) => {
      const { app, lines } = buildApp(0);
      const res = await request(app).get(path);
      expect([503, 504]).toContain(res.status);
      await accessLine(lines);
      expect(lines().filter((l) => l.level === 'error')).toEqual([]);
      expect(lines().some((l) => l.level === 'warn' && l.res?.statusCode === res.status)).toBe(true);
      expect(lines().filter((l) => Boolean(l.err?.stack))).toEqual([]);
    },
  );

  it('still logs a defect (500) at error with its stack', async () => {
    const { app, lines } = buildApp(0);
    expect((await request(app).get('/boom')).status).toBe(500);
    await accessLine(lines);
    expect(lines().some((l) => l.level === 'error' && typeof l.err?.stack === 'string')).toBe(true);
  });
});
