import { expectMalformedPathRejected, expectRejected, perTestFile } from '@platform/testing';
import request from 'supertest';
import { sendWebhook } from './support/endpoints';
import { API_KEY, newUserId, seedCatalog, startHarness, urls } from './support/harness';

const h = perTestFile(startHarness);

const LONE = '\ud800';

const post = (path: string, payload: unknown) =>
  request(h.app)
    .post(path)
    .set('X-API-Key', API_KEY)
    .send(payload as object);

function payloads() {
  const { product, monthly, oneTime } = seedCatalog(h.fake);
  const base = { user_id: newUserId(), email: 'a@example.com', ...urls };
  return {
    subscription: { ...base, product_id: product.id, price_id: monthly.id },
    item: { ...base, price_id: oneTime.id },
    cart: { ...base, items: [{ price_id: oneTime.id, quantity: 1 }] },
  };
}

describe('lone UTF-16 surrogates in string fields', () => {
  const cases: [string, string, (p: ReturnType<typeof payloads>) => object][] = [
    ['subscription', 'user_id', (p) => ({ ...p.subscription, user_id: `u${LONE}` })],
    ['subscription', 'price_id', (p) => ({ ...p.subscription, price_id: `price_${LONE}` })],
    ['subscription', 'product_id', (p) => ({ ...p.subscription, product_id: `prod_${LONE}` })],
    [
      'subscription',
      'success_url',
      (p) => ({ ...p.subscription, success_url: `https://app.example.com/${LONE}` }),
    ],
    ['item', 'cancel_url', (p) => ({ ...p.item, cancel_url: `https://app.example.com/?q=${LONE}` })],
    ['item', 'price_id', (p) => ({ ...p.item, price_id: `${LONE}` })],
    ['cart', 'items.0.price_id', (p) => ({ ...p.cart, items: [{ price_id: `p${LONE}`, quantity: 1 }] })],
    ['cart', 'email', (p) => ({ ...p.cart, email: `a${LONE}@example.com` })],
  ];
  it.each(cases)(
    'checkout/%s with a lone surrogate in %s is 400 with a request id',
    async (kind, field, make) => {
      expectRejected(await post(`/api/v1/checkout/${kind}`, make(payloads())), { path: field });
    },
  );

  it.each([
    ['user_id', { user_id: `u${LONE}`, return_url: 'https://app.example.com/' }],
    ['return_url', { user_id: 'u1', return_url: `https://app.example.com/${LONE}` }],
  ])('portal with a lone surrogate in %s is 400 with a request id', async (field, body) => {
    expectRejected(await post('/api/v1/portal', body), { path: field });
  });
});

describe('malformed percent-encoding in a path', () => {
  it('is 400 validation failed, logged without an error-level line', async () => {
    const res = await request(h.app).get('/api/v1/subscriptions/%E0%A4%A/prod_1').set('X-API-Key', API_KEY);
    expectMalformedPathRejected(res, h.logs.lines);
  });
});

describe('signed webhooks of an unexpected shape', () => {
  const deliver = (event: unknown) => sendWebhook(h.app, JSON.stringify(event));
  const now = () => Math.floor(Date.now() / 1000);
  const envelope = (over: Record<string, unknown>) => ({
    id: `evt_shape_${newUserId()}`,
    object: 'event',
    type: 'customer.subscription.updated',
    created: now(),
    data: { object: { id: 'sub_1', object: 'subscription' } },
    ...over,
  });

  it.each([
    ['no data', { data: undefined }, 'data'],
    ['data without an object', { data: {} }, 'data.object'],
    ['a non-object data.object', { data: { object: 'sub_1' } }, 'data.object'],
    ['a numeric type', { type: 42 }, 'type'],
    ['an array type', { type: [1, 2, { a: 1 }] }, 'type'],
    ['a string created', { created: 'yesterday' }, 'created'],
    ['a numeric id', { id: 7 }, 'id'],
  ])('%s is 422 deserialization error and records nothing', async (_label, over, field) => {
    const event = envelope(over);
    expectRejected(await deliver(event), { status: 422, error: 'deserialization error', path: field });
    expect(await h.prisma.webhookEvent.count({ where: { id: String(event.id) } })).toBe(0);
  });

  it.each([
    ['a numeric subscription id', { id: 42, object: 'subscription' }],
    ['an object subscription ref without an id', { id: 'cs_1', subscription: { nope: true } }],
  ])('a handled event with %s is acknowledged and ignored', async (_label, object) => {
    const type =
      typeof object.id === 'number' ? 'customer.subscription.updated' : 'checkout.session.completed';
    const event = envelope({ type, data: { object } });
    const res = await deliver(event);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    expect(await h.prisma.webhookEvent.findUnique({ where: { id: event.id as string } })).not.toBeNull();
  });
});

describe('NUL and other control characters (Postgres cannot store NUL in text)', () => {
  it.each([
    ['checkout/item', 'user_id', (p: ReturnType<typeof payloads>) => ({ ...p.item, user_id: 'u\u0000' })],
    [
      'checkout/subscription',
      'price_id',
      (p: ReturnType<typeof payloads>) => ({ ...p.subscription, price_id: 'p\u0001' }),
    ],
  ])('%s with one in %s is 400 validation failed', async (path, field, make) => {
    expectRejected(await post(`/api/v1/${path}`, make(payloads())), { path: field });
  });

  it('portal with NUL in user_id is 400, and a %00 path segment is 400', async () => {
    const portal = await post('/api/v1/portal', {
      user_id: '\u0000',
      return_url: 'https://app.example.com/',
    });
    expect(portal.status).toBe(400);
    const status = await request(h.app).get('/api/v1/subscriptions/%00/prod_1').set('X-API-Key', API_KEY);
    expectRejected(status);
  });

  it('a signed webhook whose event id carries NUL is 400, and nothing is recorded', async () => {
    const res = await sendWebhook(
      h.app,
      JSON.stringify({
        id: 'evt_\u0000',
        object: 'event',
        type: 'customer.subscription.updated',
        created: Math.floor(Date.now() / 1000),
        data: { object: { id: 'sub_1' } },
      }),
    );
    expectRejected(res, { path: 'id' });
  });
});
