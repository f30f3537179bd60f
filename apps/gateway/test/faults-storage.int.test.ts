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
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';
import { GATEWAY_ENDPOINTS } from './support/endpoints';

/**
 * Redis or Postgres stopped under load: every endpoint answers within 2 s with
 * the status docs/reliability.md promises, never 500; when the server returns,
 * the same app recovers without a restart. The test owns both servers.
 */
let redis: PrivateServer;
let postgres: PrivateServer;
let h: AiHarness;
let caller: TestCaller;
let url: string;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  h = await startAiHarness({}, { redisUrl: redis.url, databaseServerUrl: postgres.url });
  caller = await h.createCaller();
  ({ url } = await h.listen());
}, 30_000);
afterAll(async () => {
  try {
    await Promise.all([redis?.start(), postgres?.start()]);
    await h?.close();
  } finally {
    await Promise.all([redis?.close(), postgres?.close()]);
  }
}, 30_000);

const probes = (): EndpointProbe[] =>
  GATEWAY_ENDPOINTS.map((e) => ({ name: e.name, send: () => e.send(url, caller) }));
const HTML_PAGES = ['GET /api/v1/auth/magic-link'];

const SERVED = [200];
const UNAVAILABLE = [503];

/** docs/reliability.md, "Redis down". Sessions live in Postgres, so cookie endpoints keep working. */
const REDIS_DOWN: Record<string, number[]> = {
  'GET /health': SERVED,
  'GET /health/ready': UNAVAILABLE,
  'GET /openapi.json': SERVED,
  'GET /api/v1/auth/magic-link': [400],
  'POST /api/v1/auth/request-magic-link': UNAVAILABLE,
  'POST /api/v1/auth/verify-code': UNAVAILABLE,
  'GET /api/v1/auth/session': SERVED,
  'GET /api/v1/me (session)': SERVED,
  'GET /api/v1/me (api key)': UNAVAILABLE,
  'POST /api/v1/auth/api-keys': [201, 400],
  'GET /api/v1/auth/api-keys/list': SERVED,
  'POST /api/v1/auth/api-keys/revoke': [404],
  'POST /api/v1/keys': UNAVAILABLE,
  'GET /api/v1/keys': UNAVAILABLE,
  'DELETE /api/v1/keys/{provider}': UNAVAILABLE,
  'GET /api/v1/usage': UNAVAILABLE,
  'POST /api/v1/ai/chat/completions': UNAVAILABLE,
  'POST /api/v1/ai/chat/stream': UNAVAILABLE,
  'POST /api/v1/ai/image': UNAVAILABLE,
  'POST /api/v1/ai/tts': UNAVAILABLE,
  'POST /api/v1/ai/music': UNAVAILABLE,
  'POST /api/v1/ai/soundfx': UNAVAILABLE,
};

/** docs/reliability.md, "Postgres down". */
const POSTGRES_DOWN: Record<string, number[]> = Object.fromEntries(
  Object.keys(REDIS_DOWN).map((name) => [name, UNAVAILABLE]),
);
Object.assign(POSTGRES_DOWN, {
  'GET /health': SERVED,
  'GET /health/ready': UNAVAILABLE,
  'GET /openapi.json': SERVED,
  'GET /api/v1/auth/magic-link': [400],
  // Codes live in Redis; the account is only touched when a valid code is verified.
  'POST /api/v1/auth/request-magic-link': [202],
  'POST /api/v1/auth/verify-code': [400],
});

const canSignInAndCall = async () => {
  const link = await request(url)
    .post('/api/v1/auth/request-magic-link')
    .set('X-Forwarded-For', '10.99.0.1')
    .send({ email: `back-${Date.now()}@example.com` });
  const me = await request(url).get('/api/v1/me').set('x-api-key', caller.apiKey);
  const session = await request(url).get('/api/v1/auth/session').set('Cookie', caller.cookie);
  return link.status === 202 && me.status === 200 && session.status === 200;
};

const readiness = async () => {
  const res = await request(url).get('/health/ready');
  return { status: res.status, body: res.body };
};

describe('gateway with a storage server stopped', () => {
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
    const answers = await probeConcurrently(probes(), 3);
    expect(unexpectedAnswers(answers, REDIS_DOWN, HTML_PAGES)).toEqual([]);
    expect(answers.find((a) => a.status === 503 && a.name !== 'GET /health/ready')?.body).toEqual({
      error: 'service unavailable',
      request_id: expect.any(String),
    });
    await redis.start();
    const restarted = Date.now();
    expect(await eventually(canSignInAndCall)).toBe(true);
    reportFaultFigures('gateway with Redis down', answers, Date.now() - restarted);
    expect((await readiness()).status).toBe(200);
  }, 30_000);

  it('Postgres: every endpoint answers within 2 s as documented, never 500; recovery without restart', async () => {
    await postgres.stop();
    expect(await readiness()).toMatchObject({
      status: 503,
      body: { status: 'not_ready', checks: { database: 'down', key_value_store: 'up' } },
    });
    const answers = await probeConcurrently(probes(), 3);
    expect(unexpectedAnswers(answers, POSTGRES_DOWN, HTML_PAGES)).toEqual([]);
    await postgres.start();
    const restarted = Date.now();
    expect(await eventually(canSignInAndCall)).toBe(true);
    reportFaultFigures('gateway with Postgres down', answers, Date.now() - restarted);
    expect((await readiness()).status).toBe(200);
  }, 30_000);
});
