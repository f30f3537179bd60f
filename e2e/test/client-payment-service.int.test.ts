import type { AddressInfo } from 'node:net';
import { createPaymentClient, PlatformApiError, type RetryEvent } from '@platform/client';
import { SUBSCRIPTION_NONE } from '@platform/contract';
// The payment app exactly as its own integration tests build it: real createApp,
// Stripe SDK pointed at the @platform/testing Stripe fake, a fresh test database.
import { API_KEY, type Harness, newUserId, seedCatalog, startHarness } from '@platform/payment/testing';
import type { Express } from 'express';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const URLS = { success_url: 'https://app.example.com/ok', cancel_url: 'https://app.example.com/cancel' };

let h: Harness;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  h = await startHarness();
}, 60_000);
afterAll(async () => {
  for (const close of closers) await close();
  await h?.close();
});
afterEach(() => h.fake.clearFaults());

/** Serves an app on loopback, so the client talks HTTP to it like any caller. */
async function serve(app: Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let baseUrl: string;
beforeAll(async () => {
  baseUrl = await serve(h.app);
});

/** A client whose backoff waits are recorded instead of slept, so retries cost no time. */
function client(overrides: { baseUrl?: string; apiKey?: string } = {}) {
  const waits: number[] = [];
  const retries: RetryEvent[] = [];
  const api = createPaymentClient({
    baseUrl,
    apiKey: API_KEY,
    sleep: async (ms) => {
      waits.push(ms);
    },
    onRetry: (event) => retries.push(event),
    ...overrides,
  });
  return { api, waits, retries };
}

describe('payment client against the real payment service', () => {
  it('health matches the contract', async () => {
    const { api } = client();
    await expect(api.health()).resolves.toMatchObject({ status: 'ok', service: 'payment' });
  });

  it('creates subscription, item and cart checkouts, then opens the portal of the new customer', async () => {
    const { api } = client();
    const { product, monthly, oneTime } = seedCatalog(h.fake);
    const user = { user_id: newUserId(), email: 'ada@example.com' };

    const subscription = await api.createSubscriptionCheckout({
      ...user,
      ...URLS,
      product_id: product.id,
      price_id: monthly.id,
    });
    expect(subscription.checkout_url).toMatch(/^https:\/\//);
    expect(h.fake.store.checkoutSessions.get(subscription.checkout_session_id)).toBeDefined();

    const item = await api.createItemCheckout({ ...user, ...URLS, price_id: oneTime.id });
    const cart = await api.createCartCheckout({
      ...user,
      ...URLS,
      items: [
        { price_id: oneTime.id, quantity: 2 },
        { price_id: monthly.id, quantity: 1 },
      ],
    });
    expect(new Set([subscription, item, cart].map((s) => s.checkout_session_id)).size).toBe(3);

    const portal = await api.createPortalSession({
      user_id: user.user_id,
      return_url: 'https://app.example.com/me',
    });
    expect(portal.portal_url).toMatch(/^https:\/\//);
  });

  it('reads the none form of a user without a subscription', async () => {
    const { api } = client();
    const status = await api.getSubscriptionStatus({ user_id: newUserId(), product_id: 'prod_unknown' });
    expect(status).toEqual(SUBSCRIPTION_NONE);
  });

  it('the same idempotency key returns the same session', async () => {
    const { api } = client();
    const { oneTime } = seedCatalog(h.fake);
    const request = { user_id: newUserId(), email: 'ada@example.com', ...URLS, price_id: oneTime.id };
    const a = await api.createItemCheckout(request, { idempotencyKey: 'order-7' });
    const b = await api.createItemCheckout(request, { idempotencyKey: 'order-7' });
    expect(b).toEqual(a);
  });

  it('retries a POST that failed in Stripe once, with the same Idempotency-Key, and succeeds', async () => {
    const { api, waits, retries } = client();
    const { oneTime } = seedCatalog(h.fake);
    h.fake.fault({ path: /^\/v1\/checkout\/sessions/, method: 'POST', status: 500, type: 'api_error' });
    const session = await api.createItemCheckout({
      user_id: newUserId(),
      email: 'ada@example.com',
      ...URLS,
      price_id: oneTime.id,
    });
    expect(h.fake.store.checkoutSessions.get(session.checkout_session_id)).toBeDefined();
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, requestId: expect.stringMatching(UUID) });
    expect(retries[0]!.status).toBeGreaterThanOrEqual(500);
    expect(waits).toEqual([2000]);
    const sent = h.fake.requests
      .filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions')
      .slice(-2);
    expect(sent[1]!.headers['idempotency-key']).toBe(sent[0]!.headers['idempotency-key']);
  });

  it('a wrong API key is 401 invalid api key, reported at once with its request id', async () => {
    const { api, waits } = client({ apiKey: 'not-the-right-key-000' });
    const error = await api.getSubscriptionStatus({ user_id: 'u', product_id: 'p' }).catch((e) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ status: 401, error: 'invalid api key', attempts: 1 });
    expect(error.requestId).toMatch(UUID);
    expect(waits).toEqual([]);
  });

  it('a rejected body is reported with the service’s details and not retried', async () => {
    const { api, waits } = client();
    const error = await api
      .createPortalSession({ user_id: newUserId(), return_url: 'javascript:alert(1)' })
      .catch((e) => e);
    expect(error).toMatchObject({ status: 400, error: 'validation failed', attempts: 1 });
    expect(error.details).toEqual([expect.objectContaining({ path: 'return_url' })]);
    expect(waits).toEqual([]);
  });

  it('waits out the Retry-After of the service’s rate limit, then backs off and reports', async () => {
    const limitedUrl = await serve(h.buildApp({ PAYMENT_RATE_LIMIT_PER_MINUTE: '1' }));
    const { api, waits } = client({ baseUrl: limitedUrl });
    await api.getSubscriptionStatus({ user_id: newUserId(), product_id: 'prod_x' });
    const error = await api
      .getSubscriptionStatus({ user_id: newUserId(), product_id: 'prod_x' })
      .catch((e) => e);
    expect(error).toMatchObject({ status: 429, error: 'rate_limited', attempts: 4 });
    const retryAfterMs = error.retryAfterMs as number;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
    // The first wait is the header's; later ones at least the previous backoff step.
    expect(waits).toHaveLength(3);
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[1]).toBeGreaterThanOrEqual(2000);
    expect(waits[2]).toBeGreaterThanOrEqual(4000);
    expect(error.requestIds).toHaveLength(4);
  });
});

describe('what a user has paid for (issue 26)', () => {
  it('subscribeOrManage sends a user who already subscribes to the portal; isEntitled reads entitlements', async () => {
    const { api } = client();
    const { product, monthly } = seedCatalog(h.fake);
    const userId = newUserId();
    const request = {
      user_id: userId,
      email: 'a@example.com',
      product_id: product.id,
      price_id: monthly.id,
      ...URLS,
      return_url: 'https://app.example.com/account',
    };
    const first = await api.subscribeOrManage(request);
    expect(first).toMatchObject({ kind: 'checkout', url: expect.stringMatching(/^https:/) });
    const session = h.fake.completeCheckoutSession(
      (first as { checkout_session_id: string }).checkout_session_id,
    );

    const { return_url: _ignored, ...checkout } = request;
    const refused = await api.createSubscriptionCheckout(checkout).catch((e) => e);
    expect(refused).toBeInstanceOf(PlatformApiError);
    expect(refused).toMatchObject({ status: 409, code: 'subscription_exists', attempts: 1 });
    await expect(api.subscribeOrManage(request)).resolves.toEqual({
      kind: 'portal',
      url: expect.stringMatching(/^https:/),
    });

    expect(await api.isEntitled(userId, 'pro_models')).toBe(false);
    h.fake.setEntitlements(session.customer!, ['pro_models']);
    const synced = await api.syncUser(userId);
    expect(synced).toMatchObject({ user_id: userId, entitlements: ['pro_models'] });
    expect(await api.isEntitled(userId, 'pro_models')).toBe(true);
    expect(await api.isEntitled(userId, 'other_feature')).toBe(false);
    await expect(api.listPurchases(userId)).resolves.toEqual({ user_id: userId, purchases: [] });
  });
});
