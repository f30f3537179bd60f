import { perTestFile } from '@platform/testing';
import request from 'supertest';
import {
  API_KEY,
  newUserId,
  requestSubscriptionCheckout,
  STRIPE_KEY,
  seedCatalog,
  startHarness,
} from './support/harness';

const h = perTestFile(startHarness);
afterEach(() => h.fake.clearFaults());

const SESSIONS = /^\/v1\/checkout\/sessions$/;

const checkout = (app = h.app, userId?: string) =>
  requestSubscriptionCheckout(app, seedCatalog(h.fake), userId);

describe('Stripe failures', () => {
  it('an invalid request is 400 with Stripe’s message', async () => {
    h.fake.fault({ path: SESSIONS, type: 'invalid_request_error', message: 'No such coupon: promo_x' });
    const res = await checkout();
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'No such coupon: promo_x',
      code: expect.any(String),
      request_id: expect.any(String),
    });
  });

  it('a card error is 502 with Stripe’s message', async () => {
    h.fake.fault({
      path: SESSIONS,
      type: 'card_error',
      message: 'Your card was declined.',
      code: 'card_declined',
    });
    const res = await checkout();
    expect(res.status).toBe(502);
    expect(res.body.error).toBe('Your card was declined.');
  });

  it('a Stripe rate limit is 503 with Retry-After', async () => {
    h.fake.fault({ path: SESSIONS, type: 'rate_limit_error' });
    const res = await checkout();
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('stripe rate limited');
    expect(res.headers['retry-after']).toBe('1');
  });

  it('a Stripe API error is 502 without Stripe’s internals', async () => {
    h.fake.fault({ path: SESSIONS, type: 'api_error', message: 'internal stripe detail' });
    const res = await checkout();
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: 'stripe unavailable',
      code: 'stripe_unavailable',
      request_id: expect.any(String),
    });
  });

  it('an unreachable Stripe (timeout) is 502', async () => {
    const app = h.buildApp({ STRIPE_TIMEOUT_MS: '300' });
    h.fake.hang({ path: /^\/v1\/prices\//, times: 5 });
    const res = await checkout(app);
    expect(res.status).toBe(502);
    expect(res.body.error).toBe('stripe unavailable');
  });

  it('a rejected secret key is 502 and the key appears nowhere', async () => {
    h.fake.fault({
      path: /^\/v1\/prices\//,
      status: 401,
      type: 'invalid_request_error',
      message: `Invalid API Key provided: ${STRIPE_KEY.slice(0, 8)}****${STRIPE_KEY.slice(-4)}`,
    });
    const res = await checkout();
    expect(res.status).toBe(502);
    expect(res.text).not.toContain('sk_test');
    expect(h.logs.text()).not.toContain(STRIPE_KEY);
  });

  it('a permission error is 502', async () => {
    h.fake.fault({ path: SESSIONS, status: 403, type: 'invalid_request_error', message: 'restricted key' });
    const res = await checkout();
    expect(res.status).toBe(502);
  });

  it('Stripe’s idempotency error is 409', async () => {
    h.fake.fault({ path: SESSIONS, type: 'idempotency_error', message: 'Keys for idempotent requests…' });
    const res = await checkout();
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('idempotency key reused with different parameters');
  });

  it('a failure while creating the customer leaves no mapping behind', async () => {
    h.fake.fault({ path: /^\/v1\/customers$/, method: 'POST', type: 'api_error' });
    const userId = newUserId();
    const res = await checkout(h.app, userId);
    expect(res.status).toBe(502);
    expect(await h.prisma.customer.count({ where: { userId } })).toBe(0);
  });

  it('a failing status fallback read is 502', async () => {
    const userId = newUserId();
    const customer = h.fake.seedCustomer({ metadata: { user_id: userId } });
    await h.prisma.customer.create({
      data: { userId, stripeCustomerId: customer.id, email: 'a@example.com' },
    });
    h.fake.fault({ path: /^\/v1\/subscriptions$/, type: 'api_error' });
    const res = await request(h.app).get(`/api/v1/subscriptions/${userId}/prod_x`).set('X-API-Key', API_KEY);
    expect(res.status).toBe(502);
    expect(res.body.error).toBe('stripe unavailable');
  });
});
