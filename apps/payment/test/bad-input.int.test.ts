import request from 'supertest';
import { API_KEY, type Harness, newUserId, seedCatalog, startHarness } from './support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const LONE = '\ud800';
const UUID = /^[0-9a-f-]{36}$/;

const post = (path: string, payload: unknown) =>
  request(h.app)
    .post(path)
    .set('X-API-Key', API_KEY)
    .send(payload as object);

function payloads() {
  const { product, monthly, oneTime } = seedCatalog(h.fake);
  const urls = { success_url: 'https://app.example.com/done', cancel_url: 'https://app.example.com/cancel' };
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
      const res = await post(`/api/v1/checkout/${kind}`, make(payloads()));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'validation failed',
        request_id: expect.stringMatching(UUID),
        details: [expect.objectContaining({ path: field })],
      });
    },
  );

  it.each([
    ['user_id', { user_id: `u${LONE}`, return_url: 'https://app.example.com/' }],
    ['return_url', { user_id: 'u1', return_url: `https://app.example.com/${LONE}` }],
  ])('portal with a lone surrogate in %s is 400 with a request id', async (field, body) => {
    const res = await post('/api/v1/portal', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'validation failed',
      request_id: expect.stringMatching(UUID),
      details: [expect.objectContaining({ path: field })],
    });
  });
});

describe('malformed percent-encoding in a path', () => {
  it('is 400 validation failed, logged without an error-level line', async () => {
    const res = await request(h.app).get('/api/v1/subscriptions/%E0%A4%A/prod_1').set('X-API-Key', API_KEY);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'validation failed',
      request_id: expect.stringMatching(UUID),
      details: [{ path: '(path)', message: 'malformed percent-encoding' }],
    });
    const lines = h.logs.lines.map((l) => JSON.parse(l) as { level: string; request_id?: string });
    expect(lines.filter((l) => l.request_id === res.body.request_id && l.level === 'error')).toEqual([]);
  });
});
