import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { API_KEY, newUserId, seedCatalog, startHarness } from './support/harness';

const h = perTestFile(startHarness);
afterEach(() => h.fake.clearFaults());

function body(overrides: Record<string, unknown> = {}) {
  const { product, monthly } = seedCatalog(h.fake);
  return {
    user_id: newUserId(),
    email: 'ada@example.com',
    product_id: product.id,
    price_id: monthly.id,
    success_url: 'https://app.example.com/billing/done',
    cancel_url: 'https://app.example.com/billing/cancel',
    ...overrides,
  };
}

const post = (payload: unknown) =>
  request(h.app)
    .post('/api/v1/checkout/subscription')
    .set('X-API-Key', API_KEY)
    .send(payload as object);

function lastSessionRequest() {
  return h.fake.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1)!;
}

describe('POST /api/v1/checkout/subscription', () => {
  it('creates a subscription-mode session for the user with a new customer', async () => {
    const payload = body();
    const res = await post(payload);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      checkout_session_id: expect.stringMatching(/^cs_test_/),
      checkout_url: expect.any(String),
    });
    const session = h.fake.store.checkoutSessions.get(res.body.checkout_session_id)!;
    expect(session.url).toBe(res.body.checkout_url);
    expect(session.mode).toBe('subscription');
    expect(session.client_reference_id).toBe(payload.user_id);
    expect(session.metadata).toEqual({ user_id: payload.user_id, product_id: payload.product_id });
    expect(session.success_url).toBe(payload.success_url);
    expect(session.cancel_url).toBe(payload.cancel_url);
    expect(h.fake.lineItems(session.id)).toEqual([{ price: payload.price_id, quantity: 1 }]);
    const sent = lastSessionRequest().params as Record<string, Record<string, unknown>>;
    expect(sent.subscription_data).toEqual({
      metadata: { user_id: payload.user_id, product_id: payload.product_id },
    });

    const customer = h.fake.store.customers.get(session.customer!)!;
    expect(customer.metadata).toEqual({ user_id: payload.user_id });
    expect(customer.email).toBe(payload.email);
    const create = h.fake.requests.find(
      (r) =>
        r.path === '/v1/customers' &&
        r.method === 'POST' &&
        r.status === 200 &&
        (r.params.metadata as Record<string, string>)?.user_id === payload.user_id,
    )!;
    expect(create.headers['idempotency-key']).toMatch(/^customer-create:[0-9a-f]{64}$/);
    const row = await h.prisma.customer.findUnique({ where: { userId: payload.user_id } });
    expect(row).toMatchObject({ stripeCustomerId: customer.id, email: payload.email });
  });

  it('reuses the customer on the next checkout and updates a changed e-mail', async () => {
    const first = body();
    const a = await post(first);
    const b = await post({ ...first, email: 'new@example.com' });
    expect(b.status).toBe(200);
    const customerA = h.fake.store.checkoutSessions.get(a.body.checkout_session_id)!.customer;
    const customerB = h.fake.store.checkoutSessions.get(b.body.checkout_session_id)!.customer;
    expect(customerB).toBe(customerA);
    expect(h.fake.store.customers.get(customerA!)!.email).toBe('new@example.com');
    const row = await h.prisma.customer.findUnique({ where: { userId: first.user_id } });
    expect(row?.email).toBe('new@example.com');
  });

  it('an unknown price is 400 price not found', async () => {
    const res = await post(body({ price_id: 'price_does_not_exist' }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'price not found', details: [{ path: 'price_id' }] });
  });

  it('a one-time price is 400 price is not recurring', async () => {
    const { oneTime, product } = seedCatalog(h.fake);
    const res = await post(body({ price_id: oneTime.id, product_id: product.id }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'price is not recurring',
      code: 'price_not_recurring',
      request_id: expect.any(String),
    });
  });

  it('a price of another product is 400 price does not belong to product', async () => {
    const other = seedCatalog(h.fake, 'other');
    const payload = body({ product_id: other.product.id });
    const before = h.fake.counters.customers;
    const res = await post(payload);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('price does not belong to product');
    expect(h.fake.counters.customers).toBe(before);
    expect(await h.prisma.customer.count({ where: { userId: payload.user_id } })).toBe(0);
  });

  it.each([
    ['user_id', 'empty', ''],
    ['user_id', 'over 255 characters', 'x'.repeat(256)],
    ['email', 'not an address', 'not-an-email'],
    ['product_id', 'empty', ''],
    ['price_id', 'empty', ''],
    ['success_url', 'relative', '/relative/path'],
    ['success_url', 'a javascript: URL', 'javascript:alert(1)'],
    ['success_url', 'an ftp URL', 'ftp://example.com/done'],
    ['success_url', 'a URL with credentials', 'https://user:pw@example.com/done'],
    ['cancel_url', 'without scheme', 'example.com/cancel'],
    ['cancel_url', 'over 2048 characters', `https://example.com/${'a'.repeat(2048)}`],
  ])('400 validation failed when %s is %s', async (field, _label, value) => {
    const res = await post(body({ [field]: value }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation failed');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: field })]));
  });

  it.each(['user_id', 'email', 'product_id', 'price_id', 'success_url', 'cancel_url'])(
    'a missing %s is 422 deserialization error',
    async (field) => {
      const payload: Record<string, unknown> = body();
      delete payload[field];
      const res = await post(payload);
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('deserialization error');
      expect(res.body.details).toEqual([expect.objectContaining({ path: field })]);
    },
  );

  it('a wrong type is 422 and malformed JSON is 422', async () => {
    const typed = await post(body({ user_id: 42 }));
    expect(typed.status).toBe(422);
    const malformed = await request(h.app)
      .post('/api/v1/checkout/subscription')
      .set('X-API-Key', API_KEY)
      .set('Content-Type', 'application/json')
      .send('{"user_id": ');
    expect(malformed.status).toBe(422);
    expect(malformed.body).toEqual({
      error: 'deserialization error',
      code: 'deserialization_error',
      request_id: expect.any(String),
    });
  });

  it('a body over 100 kB is 413', async () => {
    const res = await post(body({ user_id: 'x'.repeat(150_000) }));
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload too large');
  });

  describe('redirect allowlist', () => {
    it('refuses a host outside PAYMENT_ALLOWED_REDIRECT_HOSTS with 400', async () => {
      const app = h.buildApp({ PAYMENT_ALLOWED_REDIRECT_HOSTS: 'app.example.com,*.shop.example' });
      const res = await request(app)
        .post('/api/v1/checkout/subscription')
        .set('X-API-Key', API_KEY)
        .send(body({ cancel_url: 'https://evil.example.net/cancel' }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'redirect host not allowed',
        details: [{ path: 'cancel_url' }],
      });
    });

    it('accepts listed hosts and subdomains of a wildcard entry', async () => {
      const app = h.buildApp({ PAYMENT_ALLOWED_REDIRECT_HOSTS: 'APP.example.com,*.shop.example' });
      const res = await request(app)
        .post('/api/v1/checkout/subscription')
        .set('X-API-Key', API_KEY)
        .send(body({ cancel_url: 'https://eu.shop.example/cancel' }));
      expect(res.status).toBe(200);
    });
  });

  describe('Idempotency-Key', () => {
    it('a retry with the same key and body returns the same session', async () => {
      const payload = body();
      const a = await post(payload).set('Idempotency-Key', 'retry-1');
      const b = await request(h.app)
        .post('/api/v1/checkout/subscription')
        .set('X-API-Key', API_KEY)
        .set('Idempotency-Key', 'retry-1')
        .send(payload);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(b.body).toEqual(a.body);
      const sent = h.fake.requests.filter((r) => r.path === '/v1/checkout/sessions').slice(-2);
      expect(sent[0]!.headers['idempotency-key']).toMatch(/^checkout-subscription:[0-9a-f]{64}$/);
      expect(sent[1]!.headers['idempotency-key']).toBe(sent[0]!.headers['idempotency-key']);
    });

    it('the same key with a different body is 409', async () => {
      const payload = body();
      await post(payload).set('Idempotency-Key', 'retry-2').expect(200);
      const res = await request(h.app)
        .post('/api/v1/checkout/subscription')
        .set('X-API-Key', API_KEY)
        .set('Idempotency-Key', 'retry-2')
        .send({ ...payload, success_url: 'https://app.example.com/other' });
      expect(res.status).toBe(409);
      expect(res.body.error).toBe('idempotency key reused with different parameters');
    });

    it('two users with the same key get their own sessions', async () => {
      const a = await post(body()).set('Idempotency-Key', 'shared-key');
      const b = await post(body()).set('Idempotency-Key', 'shared-key');
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(b.body.checkout_session_id).not.toBe(a.body.checkout_session_id);
    });

    it('a key over 255 characters is 400', async () => {
      const res = await post(body()).set('Idempotency-Key', 'k'.repeat(256));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation failed');
    });
  });
});
