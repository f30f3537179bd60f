import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { API_KEY, newUserId, startHarness } from './support/harness';

const h = perTestFile(startHarness);
afterEach(() => h.fake.clearFaults());

const RETURN_URL = 'https://app.example.com/account';

async function existingCustomer() {
  const userId = newUserId();
  const customer = h.fake.seedCustomer({ email: 'a@example.com', metadata: { user_id: userId } });
  await h.prisma.customer.create({ data: { userId, stripeCustomerId: customer.id, email: 'a@example.com' } });
  return { userId, customerId: customer.id };
}

const post = (payload: unknown, app = h.app) =>
  request(app)
    .post('/api/v1/portal')
    .set('X-API-Key', API_KEY)
    .send(payload as object);

describe('POST /api/v1/portal', () => {
  it('returns the portal URL of the user’s customer', async () => {
    const { userId, customerId } = await existingCustomer();
    const res = await post({ user_id: userId, return_url: RETURN_URL });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ portal_url: expect.stringMatching(/^https:\/\/billing\.stripe\.test\//) });
    const session = [...h.fake.store.portalSessions.values()].find((s) => s.url === res.body.portal_url)!;
    expect(session).toMatchObject({
      customer: customerId,
      return_url: RETURN_URL,
      configuration: 'bpc_default',
    });
  });

  it('passes PAYMENT_PORTAL_CONFIGURATION to Stripe', async () => {
    const app = h.buildApp({ PAYMENT_PORTAL_CONFIGURATION: 'bpc_custom123' });
    const { userId } = await existingCustomer();
    const res = await post({ user_id: userId, return_url: RETURN_URL }, app);
    expect(res.status).toBe(200);
    const session = [...h.fake.store.portalSessions.values()].find((s) => s.url === res.body.portal_url)!;
    expect(session.configuration).toBe('bpc_custom123');
  });

  it('a user who never checked out is 404 customer not found, without a Stripe call', async () => {
    const before = h.fake.requests.length;
    const res = await post({ user_id: newUserId(), return_url: RETURN_URL });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: 'customer not found',
      code: 'customer_not_found',
      request_id: expect.any(String),
    });
    expect(h.fake.requests.length).toBe(before);
  });

  it.each([
    ['return_url', 'not a url'],
    ['return_url', 'javascript:alert(1)'],
    ['user_id', ''],
  ])('an invalid %s (%p) is 400', async (field, value) => {
    const res = await post({ user_id: newUserId(), return_url: RETURN_URL, [field]: value });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation failed', details: [{ path: field }] });
  });

  it.each(['user_id', 'return_url'])('a missing %s is 422', async (field) => {
    const payload: Record<string, string> = { user_id: newUserId(), return_url: RETURN_URL };
    delete payload[field];
    const res = await post(payload);
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([expect.objectContaining({ path: field })]);
  });

  it('a return_url host outside the allowlist is 400', async () => {
    const app = h.buildApp({ PAYMENT_ALLOWED_REDIRECT_HOSTS: 'app.example.com' });
    const { userId } = await existingCustomer();
    const res = await post({ user_id: userId, return_url: 'https://elsewhere.example.org/' }, app);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'redirect host not allowed', details: [{ path: 'return_url' }] });
  });

  it('Stripe refusing the session (no saved portal settings) is 400 with Stripe’s message', async () => {
    const { userId } = await existingCustomer();
    h.fake.fault({
      path: /^\/v1\/billing_portal\/sessions$/,
      type: 'invalid_request_error',
      message: "You can't create a portal session in test mode until you save your customer portal settings.",
    });
    const res = await post({ user_id: userId, return_url: RETURN_URL });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/portal settings/);
  });

  it('Stripe being down is 502', async () => {
    const { userId } = await existingCustomer();
    h.fake.fault({ path: /^\/v1\/billing_portal\/sessions$/, type: 'api_error' });
    const res = await post({ user_id: userId, return_url: RETURN_URL });
    expect(res.status).toBe(502);
    expect(res.body.error).toBe('stripe unavailable');
  });

  it('passes a scoped Idempotency-Key to Stripe', async () => {
    const { userId } = await existingCustomer();
    const a = await post({ user_id: userId, return_url: RETURN_URL }).set('Idempotency-Key', 'portal-1');
    const b = await post({ user_id: userId, return_url: RETURN_URL }).set('Idempotency-Key', 'portal-1');
    expect(b.body.portal_url).toBe(a.body.portal_url);
    const sent = h.fake.requests.filter((r) => r.path === '/v1/billing_portal/sessions').at(-1)!;
    expect(sent.headers['idempotency-key']).toMatch(/^portal:[0-9a-f]{64}$/);
  });
});
