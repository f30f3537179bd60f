import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { API_KEY, newUserId, seedCatalog, startHarness } from './support/harness';

const h = perTestFile(startHarness);
afterEach(() => h.fake.clearFaults());

const NONE =
  '{"status":"none","subscription_id":"","current_period_end":"0001-01-01T00:00:00Z","product_id":""}';
const DAY = 86_400;

const getStatus = (userId: string, productId: string) =>
  request(h.app).get(`/api/v1/subscriptions/${userId}/${productId}`).set('X-API-Key', API_KEY);

/** A user who has checked out before: a Stripe customer and our mapping. */
async function existingCustomer() {
  const userId = newUserId();
  const customer = h.fake.seedCustomer({ email: 'a@example.com', metadata: { user_id: userId } });
  await h.prisma.customer.create({ data: { userId, stripeCustomerId: customer.id, email: 'a@example.com' } });
  return { userId, customerId: customer.id };
}

function nowSeconds(): number {
  return Math.floor(h.clock.now().getTime() / 1000);
}

function listCalls(): number {
  return h.fake.requests.filter((r) => r.method === 'GET' && r.path === '/v1/subscriptions').length;
}

describe('GET /api/v1/subscriptions/{user_id}/{product_id}', () => {
  it('a user without a customer gets the none form, byte for byte', async () => {
    const res = await getStatus(newUserId(), 'prod_anything');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).toBe(NONE);
  });

  it('a customer without a subscription of the product gets the none form after one Stripe read', async () => {
    const { userId, customerId } = await existingCustomer();
    const other = seedCatalog(h.fake, 'other');
    h.fake.seedSubscription({ customer: customerId, items: [{ price: other.monthly.id }] });
    const before = listCalls();
    const first = await getStatus(userId, 'prod_not_subscribed');
    expect(first.text).toBe(NONE);
    expect(listCalls()).toBe(before + 1);
    const second = await getStatus(userId, 'prod_not_subscribed');
    expect(second.text).toBe(NONE);
    expect(listCalls()).toBe(before + 1);
  });

  it('reads an active subscription from Stripe once, then answers from the database', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    const periodEnd = nowSeconds() + 30 * DAY;
    const sub = h.fake.seedSubscription({
      customer: customerId,
      items: [{ price: monthly.id, current_period_end: periodEnd }],
    });
    const before = listCalls();
    const res = await getStatus(userId, product.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'active',
      subscription_id: sub.id,
      current_period_end: new Date(periodEnd * 1000).toISOString().replace('.000Z', 'Z'),
      product_id: product.id,
    });
    expect(Object.keys(res.body)).toEqual(['status', 'subscription_id', 'current_period_end', 'product_id']);
    expect(listCalls()).toBe(before + 1);
    const stored = await h.prisma.subscription.findUnique({
      where: { id: sub.id },
      include: { items: true },
    });
    expect(stored).toMatchObject({
      userId,
      status: 'active',
      items: [expect.objectContaining({ productId: product.id })],
    });

    await getStatus(userId, product.id).expect(200);
    expect(listCalls()).toBe(before + 1);
  });

  it('a snapshot older than PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS is read again from Stripe', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    const sub = h.fake.seedSubscription({ customer: customerId, items: [{ price: monthly.id }] });
    expect((await getStatus(userId, product.id)).body.status).toBe('active');

    h.fake.updateSubscription(sub.id, { status: 'past_due' });
    h.clock.advance(30 * 60 * 1000);
    expect((await getStatus(userId, product.id)).body.status).toBe('active');
    h.clock.advance(31 * 60 * 1000);
    expect((await getStatus(userId, product.id)).body.status).toBe('past_due');
  });

  it('the maximum age is configurable', async () => {
    const app = h.buildApp({ PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS: '5' });
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    const sub = h.fake.seedSubscription({ customer: customerId, items: [{ price: monthly.id }] });
    const get = () =>
      request(app).get(`/api/v1/subscriptions/${userId}/${product.id}`).set('X-API-Key', API_KEY);
    expect((await get()).body.status).toBe('active');
    h.fake.updateSubscription(sub.id, { status: 'canceled' });
    h.clock.advance(6_000);
    expect((await get()).body.status).toBe('canceled');
  });

  it('prefers the most entitling status, then the newest subscription', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    const t = nowSeconds();
    const seed = (status: Parameters<typeof h.fake.seedSubscription>[0]['status'], created: number) =>
      h.fake.seedSubscription({ customer: customerId, items: [{ price: monthly.id }], status, created });
    seed('canceled', t - 10);
    seed('incomplete_expired', t - 9);
    seed('incomplete', t - 8);
    seed('unpaid', t - 7);
    seed('past_due', t - 6);
    seed('trialing', t - 5);
    const olderActive = seed('active', t - 100);
    const newerActive = seed('active', t - 50);
    const res = await getStatus(userId, product.id);
    expect(res.body).toMatchObject({ status: 'active', subscription_id: newerActive.id });
    expect(res.body.subscription_id).not.toBe(olderActive.id);
  });

  it('trialing beats past_due, which beats a newer canceled one', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    const t = nowSeconds();
    h.fake.seedSubscription({
      customer: customerId,
      items: [{ price: monthly.id }],
      status: 'canceled',
      created: t,
    });
    const pastDue = h.fake.seedSubscription({
      customer: customerId,
      items: [{ price: monthly.id }],
      status: 'past_due',
      created: t - 20,
    });
    expect((await getStatus(userId, product.id)).body).toMatchObject({
      status: 'past_due',
      subscription_id: pastDue.id,
    });

    const trialing = h.fake.seedSubscription({
      customer: customerId,
      items: [{ price: monthly.id }],
      status: 'trialing',
      created: t - 30,
    });
    h.clock.advance(2 * 3600 * 1000);
    expect((await getStatus(userId, product.id)).body).toMatchObject({
      status: 'trialing',
      subscription_id: trialing.id,
    });
  });

  it('Stripe’s paused maps to unpaid', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    h.fake.seedSubscription({ customer: customerId, items: [{ price: monthly.id }], status: 'paused' });
    expect((await getStatus(userId, product.id)).body.status).toBe('unpaid');
  });

  it('current_period_end comes from the product’s item, not another item or the subscription', async () => {
    const { userId, customerId } = await existingCustomer();
    const a = seedCatalog(h.fake, 'a');
    const b = seedCatalog(h.fake, 'b');
    const t = nowSeconds();
    h.fake.seedSubscription({
      customer: customerId,
      items: [
        { price: a.monthly.id, current_period_end: t + 10 * DAY },
        { price: b.monthly.id, current_period_end: t + 20 * DAY },
      ],
      legacyPeriodFields: true,
    });
    const res = await getStatus(userId, b.product.id);
    expect(res.body.current_period_end).toBe(
      new Date((t + 20 * DAY) * 1000).toISOString().replace('.000Z', 'Z'),
    );
  });

  it('falls back to the subscription-level current_period_end of older API versions', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    const t = nowSeconds();
    const sub = h.fake.seedSubscription({
      customer: customerId,
      items: [{ price: monthly.id, current_period_end: t + 5 * DAY }],
      legacyPeriodFields: true,
    });
    // The pre-2025-03-31 shape: the period lives on the subscription only.
    const stored = h.fake.store.subscriptions.get(sub.id)!;
    stored.current_period_end = t + 7 * DAY;
    for (const item of stored.items.data) delete (item as { current_period_end?: number }).current_period_end;
    const res = await getStatus(userId, product.id);
    expect(res.body.current_period_end).toBe(
      new Date((t + 7 * DAY) * 1000).toISOString().replace('.000Z', 'Z'),
    );
  });

  it('concurrent requests for a stale user share one Stripe read', async () => {
    const { userId, customerId } = await existingCustomer();
    const { product, monthly } = seedCatalog(h.fake);
    h.fake.seedSubscription({ customer: customerId, items: [{ price: monthly.id }] });
    const before = listCalls();
    const responses = await Promise.all(Array.from({ length: 5 }, () => getStatus(userId, product.id)));
    expect(responses.map((r) => r.body.status)).toEqual(Array(5).fill('active'));
    expect(listCalls()).toBe(before + 1);
  });

  it('a user_id over 255 characters is 400', async () => {
    const res = await getStatus('u'.repeat(256), 'prod_x');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation failed', details: [{ path: 'user_id' }] });
  });
});
