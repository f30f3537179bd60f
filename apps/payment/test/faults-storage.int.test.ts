import type { Server } from 'node:http';
import {
  type EndpointProbe,
  eventually,
  type PrivateServer,
  probeConcurrently,
  reportFaultFigures,
  startPrivatePostgres,
  startPrivateRedis,
  unexpectedAnswers,
} from '@platform/testing';
import request from 'supertest';
import { paymentEndpoints } from './support/endpoints';
import { type Harness, startHarness } from './support/harness';

/**
 * Redis or Postgres stopped under load: every endpoint answers within 2 s with
 * the status docs/reliability.md promises, never 500; when the server returns,
 * the same app recovers without a restart. The test owns both servers.
 */
let redis: PrivateServer;
let postgres: PrivateServer;
let h: Harness;
let server: Server;
let url: string;
let probes: EndpointProbe[];

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  h = await startHarness({ redisUrl: redis.url, databaseServerUrl: postgres.url });
  server = h.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  probes = (await paymentEndpoints(h)).map((e) => ({ name: e.name, send: () => e.send(url) }));
}, 30_000);
afterAll(async () => {
  try {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await Promise.all([redis?.start(), postgres?.start()]);
    await h?.close();
  } finally {
    await Promise.all([redis?.close(), postgres?.close()]);
  }
}, 30_000);

const SERVED = [200];
const UNAVAILABLE = [503];
const PUBLIC = {
  'GET /health': SERVED,
  'GET /openapi.json': SERVED,
  'GET /docs': SERVED,
  'GET /metrics': SERVED,
};

/** docs/reliability.md, "Redis down": the per-key rate limit lives in Redis and fails closed. */
const REDIS_DOWN: Record<string, number[]> = {
  ...PUBLIC,
  'GET /health/ready': UNAVAILABLE,
  'POST /api/v1/checkout/subscription': UNAVAILABLE,
  'POST /api/v1/checkout/item': UNAVAILABLE,
  'POST /api/v1/checkout/cart': UNAVAILABLE,
  'GET /api/v1/subscriptions/{user_id}/{product_id}': UNAVAILABLE,
  'POST /api/v1/portal': UNAVAILABLE,
  'POST /webhooks/stripe': SERVED,
};

/** docs/reliability.md, "Postgres down". */
const POSTGRES_DOWN: Record<string, number[]> = {
  ...PUBLIC,
  'GET /health/ready': UNAVAILABLE,
  'POST /api/v1/checkout/subscription': UNAVAILABLE,
  'POST /api/v1/checkout/item': UNAVAILABLE,
  'POST /api/v1/checkout/cart': UNAVAILABLE,
  'GET /api/v1/subscriptions/{user_id}/{product_id}': UNAVAILABLE,
  'POST /api/v1/portal': UNAVAILABLE,
  'POST /webhooks/stripe': UNAVAILABLE,
};

const statusAnswers = async () => {
  const status = probes.find((p) => p.name.startsWith('GET /api/v1/subscriptions'));
  const res = await status!.send();
  return res.status === 200;
};

const readiness = async () => {
  const res = await request(url).get('/health/ready');
  return { status: res.status, body: res.body };
};

describe('payment with a storage server stopped', () => {
  it('Redis: every endpoint answers within 2 s as documented, never 500; recovery without restart', async () => {
    await redis.stop();
    expect(await readiness()).toMatchObject({
      status: 503,
      body: {
        error: 'service unavailable',
        status: 'not_ready',
        checks: { database: 'up', key_value_store: 'down' },
      },
    });
    const answers = await probeConcurrently(probes, 3);
    expect(unexpectedAnswers(answers, REDIS_DOWN)).toEqual([]);
    expect(answers.find((a) => a.status === 503 && a.name !== 'GET /health/ready')?.body).toEqual({
      error: 'service unavailable',
      request_id: expect.any(String),
    });
    await redis.start();
    const restarted = Date.now();
    expect(await eventually(statusAnswers)).toBe(true);
    reportFaultFigures('payment with Redis down', answers, Date.now() - restarted);
    expect((await readiness()).status).toBe(200);
  }, 30_000);

  it('Postgres: every endpoint answers within 2 s as documented, never 500; recovery without restart', async () => {
    await postgres.stop();
    expect(await readiness()).toMatchObject({
      status: 503,
      body: { status: 'not_ready', checks: { database: 'down', key_value_store: 'up' } },
    });
    const answers = await probeConcurrently(probes, 3);
    expect(unexpectedAnswers(answers, POSTGRES_DOWN)).toEqual([]);
    await postgres.start();
    const restarted = Date.now();
    expect(await eventually(statusAnswers)).toBe(true);
    reportFaultFigures('payment with Postgres down', answers, Date.now() - restarted);
    expect((await readiness()).status).toBe(200);
  }, 30_000);
});
