import {
  createTestKv,
  describeWithSharedServers,
  perTestFile,
  type SharedServers,
  startSharedServers,
} from '@platform/testing';
import request from 'supertest';
import { API_KEY, ROTATED_API_KEY, startHarness } from './support/harness';

const h = perTestFile(startHarness);

describe('rate limit per API key', () => {
  it('the request over PAYMENT_RATE_LIMIT_PER_MINUTE is 429 rate_limited with Retry-After', async () => {
    const app = h.buildApp({ PAYMENT_RATE_LIMIT_PER_MINUTE: '3' });
    const get = (key: string) =>
      request(app).get('/api/v1/subscriptions/nobody/prod_x').set('X-API-Key', key);
    const first = await get(API_KEY);
    expect(first.status).toBe(200);
    // express-rate-limit's draft-8 headers: the policy and what is left of it.
    expect(first.headers['ratelimit-policy']).toMatch(/^"api"; q=3; w=60(;|$)/);
    expect(first.headers.ratelimit).toMatch(/^"api"; r=2; t=\d+(;|$)/);
    for (let i = 0; i < 2; i++) expect((await get(API_KEY)).status).toBe(200);
    const limited = await get(API_KEY);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'rate_limited',
      code: 'rate_limited',
      request_id: expect.any(String),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);

    // Each key has its own budget, and public routes are never limited.
    expect((await get(ROTATED_API_KEY)).status).toBe(200);
    expect((await request(app).get('/health')).status).toBe(200);
  });

  it('unauthenticated requests do not use up a key’s budget', async () => {
    const app = h.buildApp({ PAYMENT_RATE_LIMIT_PER_MINUTE: '2' });
    for (let i = 0; i < 5; i++) {
      expect(
        (await request(app).get('/api/v1/subscriptions/u/p').set('X-API-Key', 'wrong-key-xxxxxxxx')).status,
      ).toBe(401);
    }
    expect((await request(app).get('/api/v1/subscriptions/u/p').set('X-API-Key', API_KEY)).status).toBe(200);
  });
});

// Shared counters need a shared store: a real Redis (TEST_REDIS_URL in CI, else a private one).
describeWithSharedServers('the rate limit across instances (apps/payment/test/rate-limit.int.test.ts)')(
  'rate limit across instances',
  () => {
    let servers: SharedServers | undefined;
    beforeAll(async () => {
      servers = await startSharedServers();
    });
    afterAll(async () => {
      await servers?.close();
    });
    it('two instances on one Redis share a key’s budget', async () => {
      const kv = createTestKv({ url: (servers as SharedServers).redisUrl });
      try {
        const a = h.buildApp({ PAYMENT_RATE_LIMIT_PER_MINUTE: '2' }, { kv });
        const b = h.buildApp({ PAYMENT_RATE_LIMIT_PER_MINUTE: '2' }, { kv });
        const get = (app: typeof a) =>
          request(app).get('/api/v1/subscriptions/nobody/prod_x').set('X-API-Key', API_KEY);
        expect((await get(a)).status).toBe(200);
        expect((await get(b)).status).toBe(200);
        expect((await get(a)).status).toBe(429);
        expect((await get(b)).status).toBe(429);
      } finally {
        await kv.close();
      }
    });
  },
);
