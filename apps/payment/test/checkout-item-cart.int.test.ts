import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { API_KEY, newUserId, seedCatalog, startHarness, urls } from './support/harness';

const h = perTestFile(startHarness);

const post = (path: string, payload: unknown) =>
  request(h.app)
    .post(path)
    .set('X-API-Key', API_KEY)
    .send(payload as object);

/** An item checkout for a new user; `fields` add or replace what the test is about. */
function item(fields: Record<string, unknown>) {
  return { user_id: newUserId(), email: 'a@example.com', ...urls, ...fields };
}

function sentParams(sessionId: string): Record<string, unknown> {
  const session = h.fake.store.checkoutSessions.get(sessionId)!;
  const req = h.fake.requests.find(
    (r) =>
      r.path === '/v1/checkout/sessions' &&
      r.status === 200 &&
      r.params.client_reference_id === session.client_reference_id,
  )!;
  return req.params as Record<string, unknown>;
}

describe('POST /api/v1/checkout/item', () => {
  it('a one-time price gives a payment-mode session, quantity defaulting to 1', async () => {
    const { product, oneTime } = seedCatalog(h.fake);
    const userId = newUserId();
    const res = await post('/api/v1/checkout/item', item({ user_id: userId, price_id: oneTime.id }));
    expect(res.status).toBe(200);
    const session = h.fake.store.checkoutSessions.get(res.body.checkout_session_id)!;
    expect(session.mode).toBe('payment');
    expect(session.client_reference_id).toBe(userId);
    expect(session.metadata).toEqual({ user_id: userId, product_id: product.id });
    expect(h.fake.lineItems(session.id)).toEqual([{ price: oneTime.id, quantity: 1 }]);
    expect(sentParams(session.id).payment_intent_data).toEqual({
      metadata: { user_id: userId, product_id: product.id },
    });
  });

  it('a recurring price gives a subscription-mode session with the quantity asked for', async () => {
    const { product, monthly } = seedCatalog(h.fake);
    const userId = newUserId();
    const res = await post(
      '/api/v1/checkout/item',
      item({ user_id: userId, price_id: monthly.id, quantity: 3 }),
    );
    expect(res.status).toBe(200);
    const session = h.fake.store.checkoutSessions.get(res.body.checkout_session_id)!;
    expect(session.mode).toBe('subscription');
    expect(h.fake.lineItems(session.id)).toEqual([{ price: monthly.id, quantity: 3 }]);
    expect(sentParams(session.id).subscription_data).toEqual({
      metadata: { user_id: userId, product_id: product.id },
    });
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['above Stripe maximum', 1_000_000],
    ['fractional', 1.5],
  ])('quantity %s is 400 validation failed', async (_label, quantity) => {
    const { oneTime } = seedCatalog(h.fake);
    const res = await post('/api/v1/checkout/item', item({ price_id: oneTime.id, quantity }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation failed', details: [{ path: 'quantity' }] });
  });

  it.each([
    ['a string', '2'],
    ['null', null],
  ])('quantity %s is 422 deserialization error', async (_label, quantity) => {
    const { oneTime } = seedCatalog(h.fake);
    const res = await post('/api/v1/checkout/item', item({ price_id: oneTime.id, quantity }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'deserialization error', details: [{ path: 'quantity' }] });
  });

  it('an unknown price is 400 price not found and creates no customer', async () => {
    const before = h.fake.counters.customers;
    const res = await post('/api/v1/checkout/item', item({ price_id: 'price_missing' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('price not found');
    expect(h.fake.counters.customers).toBe(before);
  });

  it.each(['success_url', 'cancel_url'])('an invalid %s is 400', async (field) => {
    const { oneTime } = seedCatalog(h.fake);
    const res = await post(
      '/api/v1/checkout/item',
      item({ price_id: oneTime.id, [field]: 'mailto:a@example.com' }),
    );
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ path: field })]);
  });
});

describe('POST /api/v1/checkout/cart', () => {
  const cart = (items: unknown, overrides: Record<string, unknown> = {}) => item({ items, ...overrides });
  /** Cart lines from [price_id, quantity] pairs. */
  const lines = (...pairs: Array<[string, number]>) =>
    pairs.map(([price_id, quantity]) => ({ price_id, quantity }));

  it('only one-time prices give a payment session with every line', async () => {
    const a = seedCatalog(h.fake, 'a');
    const b = seedCatalog(h.fake, 'b');
    const res = await post('/api/v1/checkout/cart', cart(lines([a.oneTime.id, 2], [b.oneTime.id, 1])));
    expect(res.status).toBe(200);
    const session = h.fake.store.checkoutSessions.get(res.body.checkout_session_id)!;
    expect(session.mode).toBe('payment');
    expect(h.fake.lineItems(session.id)).toEqual([
      { price: a.oneTime.id, quantity: 2 },
      { price: b.oneTime.id, quantity: 1 },
    ]);
  });

  it('any recurring price makes it a subscription session', async () => {
    const a = seedCatalog(h.fake, 'a');
    const b = seedCatalog(h.fake, 'b');
    const payload = cart(lines([a.oneTime.id, 1], [b.monthly.id, 1]));
    const res = await post('/api/v1/checkout/cart', payload);
    expect(res.status).toBe(200);
    const session = h.fake.store.checkoutSessions.get(res.body.checkout_session_id)!;
    expect(session.mode).toBe('subscription');
    expect(session.metadata).toEqual({ user_id: payload.user_id });
    expect(sentParams(session.id).subscription_data).toEqual({ metadata: { user_id: payload.user_id } });
  });

  it('duplicate price_ids are merged by adding their quantities', async () => {
    const a = seedCatalog(h.fake, 'a');
    const b = seedCatalog(h.fake, 'b');
    const res = await post(
      '/api/v1/checkout/cart',
      cart(lines([a.oneTime.id, 1], [b.oneTime.id, 4], [a.oneTime.id, 2])),
    );
    expect(res.status).toBe(200);
    expect(h.fake.lineItems(res.body.checkout_session_id)).toEqual([
      { price: a.oneTime.id, quantity: 3 },
      { price: b.oneTime.id, quantity: 4 },
    ]);
  });

  it('merged quantities above 999999 are 400', async () => {
    const a = seedCatalog(h.fake, 'a');
    const res = await post('/api/v1/checkout/cart', cart(lines([a.oneTime.id, 999_999], [a.oneTime.id, 1])));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation failed', details: [{ path: 'items.0.quantity' }] });
  });

  it('an empty cart is 400 and more than 100 items are 400', async () => {
    const empty = await post('/api/v1/checkout/cart', cart([]));
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual([expect.objectContaining({ path: 'items' })]);
    const a = seedCatalog(h.fake, 'a');
    const many = await post(
      '/api/v1/checkout/cart',
      cart(Array.from({ length: 101 }, () => ({ price_id: a.oneTime.id, quantity: 1 }))),
    );
    expect(many.status).toBe(400);
  });

  it('more than 20 recurring prices in a subscription cart are 400', async () => {
    const items = Array.from({ length: 21 }, (_, i) => ({
      price_id: seedCatalog(h.fake, `r${i}`).monthly.id,
      quantity: 1,
    }));
    const res = await post('/api/v1/checkout/cart', cart(items));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation failed', details: [{ path: 'items' }] });
  });

  it.each([
    ['price_id', { quantity: 1 }],
    ['quantity', { price_id: 'price_x' }],
  ])('an item without %s is 422', async (field, item) => {
    const res = await post('/api/v1/checkout/cart', cart([item]));
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([expect.objectContaining({ path: `items.0.${field}` })]);
  });

  it('an item with quantity 0 is 400', async () => {
    const a = seedCatalog(h.fake, 'a');
    const res = await post('/api/v1/checkout/cart', cart([{ price_id: a.oneTime.id, quantity: 0 }]));
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ path: 'items.0.quantity' })]);
  });

  it('an unknown price names the item in details', async () => {
    const a = seedCatalog(h.fake, 'a');
    const res = await post('/api/v1/checkout/cart', cart(lines([a.oneTime.id, 1], ['price_nope', 1])));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'price not found', details: [{ path: 'items.1.price_id' }] });
  });

  it('mixed currencies are refused by Stripe and answered 400 with its message', async () => {
    const usd = seedCatalog(h.fake, 'usd');
    const product = h.fake.seedProduct({ name: 'eur' });
    const eur = h.fake.seedPrice({ product: product.id, currency: 'eur', unit_amount: 100 });
    const res = await post('/api/v1/checkout/cart', cart(lines([usd.oneTime.id, 1], [eur.id, 1])));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Line items must all use the same currency.');
  });
});
