import { buildEvent, signWebhookPayload } from '@platform/testing';
import request from 'supertest';
import { API_KEY, type Harness, newUserId, seedCatalog, urls, WEBHOOK_SECRET } from './harness';

/** An app, or the base URL of one listening (cheaper under concurrent load). */
export type Target = Parameters<typeof request>[0];

export type EndpointCall = { name: string; send(target: Target): request.Test };

/** POSTs `raw` to /webhooks/stripe as JSON, signed with the harness secret unless `signature` is given (null: none). */
export function sendWebhook(
  target: Target,
  raw: string,
  signature: string | null = signWebhookPayload(raw, WEBHOOK_SECRET),
): request.Test {
  const req = request(target).post('/webhooks/stripe').set('Content-Type', 'application/json');
  return (signature === null ? req : req.set('Stripe-Signature', signature)).send(raw);
}

/** The seeded catalog, and a customer (in the fake and the DB) with an active monthly subscription. */
export async function seedSubscriber(h: Harness) {
  const catalog = seedCatalog(h.fake);
  const userId = newUserId();
  const customer = h.fake.seedCustomer({ email: 'a@example.com', metadata: { user_id: userId } });
  await h.prisma.customer.create({ data: { userId, stripeCustomerId: customer.id, email: 'a@example.com' } });
  const subscription = h.fake.seedSubscription({
    customer: customer.id,
    items: [{ price: catalog.monthly.id }],
    status: 'active',
  });
  return { ...catalog, userId, subscription };
}

/**
 * Every route of the payment service (src/app.ts) in its ordinary, authorised
 * form, on a catalog and a customer seeded in `h` (call while everything is up).
 */
export async function paymentEndpoints(h: Harness): Promise<EndpointCall[]> {
  const { product, oneTime, userId, subscription: sub } = await seedSubscriber(h);
  // The subscriber already has `product`: a subscription checkout for it would be 409 subscription_exists.
  const unsubscribed = seedCatalog(h.fake, 'fresh');
  const api = (target: Target, method: 'get' | 'post', path: string) =>
    request(target)[method](path).set('X-API-Key', API_KEY);
  const base = { user_id: userId, email: 'a@example.com', ...urls };
  return [
    { name: 'GET /health', send: (t) => request(t).get('/health') },
    { name: 'GET /openapi.json', send: (t) => request(t).get('/openapi.json') },
    { name: 'GET /health/ready', send: (t) => request(t).get('/health/ready') },
    { name: 'GET /docs', send: (t) => request(t).get('/docs') },
    { name: 'GET /metrics', send: (t) => request(t).get('/metrics') },
    {
      name: 'POST /api/v1/checkout/subscription',
      send: (t) =>
        api(t, 'post', '/api/v1/checkout/subscription').send({
          ...base,
          product_id: unsubscribed.product.id,
          price_id: unsubscribed.monthly.id,
        }),
    },
    {
      name: 'POST /api/v1/checkout/item',
      send: (t) => api(t, 'post', '/api/v1/checkout/item').send({ ...base, price_id: oneTime.id }),
    },
    {
      name: 'POST /api/v1/checkout/cart',
      send: (t) =>
        api(t, 'post', '/api/v1/checkout/cart').send({
          ...base,
          items: [{ price_id: oneTime.id, quantity: 2 }],
        }),
    },
    {
      name: 'GET /api/v1/subscriptions/{user_id}/{product_id}',
      send: (t) => api(t, 'get', `/api/v1/subscriptions/${userId}/${product.id}`),
    },
    {
      name: 'POST /api/v1/portal',
      send: (t) => api(t, 'post', '/api/v1/portal').send({ user_id: userId, return_url: urls.success_url }),
    },
    {
      name: 'GET /api/v1/purchases/{user_id}',
      send: (t) => api(t, 'get', `/api/v1/purchases/${userId}`),
    },
    {
      name: 'GET /api/v1/entitlements/{user_id}',
      send: (t) => api(t, 'get', `/api/v1/entitlements/${userId}`),
    },
    {
      name: 'POST /api/v1/sync/{user_id}',
      send: (t) => api(t, 'post', `/api/v1/sync/${userId}`),
    },
    {
      name: 'POST /webhooks/stripe',
      send: (t) => sendWebhook(t, JSON.stringify(buildEvent('customer.subscription.updated', sub))),
    },
  ];
}
