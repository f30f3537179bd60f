import { perTestFile, type StripeEventEnvelope, signWebhookPayload } from '@platform/testing';
import request from 'supertest';
import { runReconciliation } from '../src/reconcile/reconcile';
import {
  API_KEY,
  newUserId,
  requestSubscriptionCheckout,
  seedCatalog,
  startHarness,
  urls,
  WEBHOOK_SECRET,
} from './support/harness';

// Issue 26: payment as the source of truth of what a user has paid for. One test per fault.
const h = perTestFile(startHarness);
afterEach(() => h.fake.clearFaults());

function deliver(event: StripeEventEnvelope) {
  const raw = JSON.stringify(event);
  return request(h.app)
    .post('/webhooks/stripe')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', signWebhookPayload(raw, WEBHOOK_SECRET))
    .send(raw);
}

/** Logs an event in the fake's account and delivers it, as Stripe would. */
async function emit(type: string, object: unknown) {
  const res = await deliver(h.fake.logEvent(type, object));
  expect(res.status).toBe(200);
}

const api = {
  get: (path: string) => request(h.app).get(path).set('X-API-Key', API_KEY),
  post: (path: string, body?: object) => request(h.app).post(path).set('X-API-Key', API_KEY).send(body),
};

const status = (userId: string, productId: string) => api.get(`/api/v1/subscriptions/${userId}/${productId}`);

async function buyOnce(userId: string, prices: Array<{ id: string }>, opts: { async?: boolean } = {}) {
  const res = await api.post('/api/v1/checkout/cart', {
    user_id: userId,
    email: 'buyer@example.com',
    items: prices.map((p, i) => ({ price_id: p.id, quantity: i + 1 })),
    ...urls,
  });
  expect(res.status).toBe(200);
  const session = h.fake.completeCheckoutSession(res.body.checkout_session_id, opts);
  return session;
}

describe('1. fresh status right after payment', () => {
  it('a status read before checkout does not make the service answer none after the user paid, webhooks delayed', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    // A first checkout creates the customer; the user abandons it and the app reads status: none, stored as fresh.
    const first = await requestSubscriptionCheckout(h.app, catalog, userId);
    expect(first.status).toBe(200);
    expect((await status(userId, catalog.product.id)).body.status).toBe('none');
    expect((await status(userId, catalog.product.id)).body.status).toBe('none');

    const second = await requestSubscriptionCheckout(h.app, catalog, userId);
    expect(second.status).toBe(200);
    h.fake.completeCheckoutSession(second.body.checkout_session_id);
    // No webhook has arrived; the success page reads status at once.
    const after = await status(userId, catalog.product.id);
    expect(after.body).toMatchObject({ status: 'active', product_id: catalog.product.id });

    // Once the outcome is known, reads are served from the database again.
    const lists = h.fake.requests.filter((r) => r.path === '/v1/subscriptions').length;
    expect((await status(userId, catalog.product.id)).body.status).toBe('active');
    expect(h.fake.requests.filter((r) => r.path === '/v1/subscriptions').length).toBe(lists);
  });

  it('POST /api/v1/sync/{user_id} stores what the user paid for at once; 404 for a user without a customer', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const checkout = await requestSubscriptionCheckout(h.app, catalog, userId);
    const session = h.fake.completeCheckoutSession(checkout.body.checkout_session_id);
    h.fake.setEntitlements(session.customer!, ['pro_models']);
    const res = await api.post(`/api/v1/sync/${userId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      user_id: userId,
      subscriptions: [
        { subscription_id: session.subscription, status: 'active', product_ids: [catalog.product.id] },
      ],
      entitlements: ['pro_models'],
      purchases: 0,
    });
    const unknown = await api.post(`/api/v1/sync/${newUserId()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'customer not found', code: 'customer_not_found' });
    expect((await request(h.app).post(`/api/v1/sync/${userId}`)).status).toBe(401);
  });
});

describe('2. no double subscriptions', () => {
  it('a second subscription checkout to the same product is 409 subscription_exists, even before any webhook', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const first = await requestSubscriptionCheckout(h.app, catalog, userId);
    h.fake.completeCheckoutSession(first.body.checkout_session_id);
    const sessions = h.fake.counters.checkoutSessions;

    const second = await requestSubscriptionCheckout(h.app, catalog, userId);
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      error: 'an active subscription to this product already exists',
      code: 'subscription_exists',
      details: [expect.objectContaining({ path: 'product_id' })],
    });
    expect(h.fake.counters.checkoutSessions).toBe(sessions);

    // The same holds for an item checkout of a recurring price of that product.
    const item = await api.post('/api/v1/checkout/item', {
      user_id: userId,
      email: 'a@example.com',
      price_id: catalog.monthly.id,
      ...urls,
    });
    expect(item.status).toBe(409);
    // Another product, or one-time items of the same product, are fine.
    const other = seedCatalog(h.fake, 'other');
    expect((await requestSubscriptionCheckout(h.app, other, userId)).status).toBe(200);
    const once = await api.post('/api/v1/checkout/item', {
      user_id: userId,
      email: 'a@example.com',
      price_id: catalog.oneTime.id,
      ...urls,
    });
    expect(once.status).toBe(200);
  });

  it('a canceled subscription does not block a new one', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const first = await requestSubscriptionCheckout(h.app, catalog, userId);
    const session = h.fake.completeCheckoutSession(first.body.checkout_session_id);
    h.fake.updateSubscription(session.subscription!, { status: 'canceled' });
    expect((await requestSubscriptionCheckout(h.app, catalog, userId)).status).toBe(200);
  });
});

describe('3. deleted customers', () => {
  it('checkout and portal work after the customer was deleted in the Dashboard, event or not', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const first = await requestSubscriptionCheckout(h.app, catalog, userId);
    const old = h.fake.store.checkoutSessions.get(first.body.checkout_session_id)!.customer!;
    h.fake.deleteCustomer(old);

    // No event yet: Stripe answers "No such customer"; the mapping is replaced and the checkout succeeds.
    const again = await requestSubscriptionCheckout(h.app, catalog, userId);
    expect(again.status).toBe(200);
    const fresh = h.fake.store.checkoutSessions.get(again.body.checkout_session_id)!.customer!;
    expect(fresh).not.toBe(old);
    expect(h.fake.store.customers.get(fresh)?.metadata).toEqual({ user_id: userId });
    expect(await h.prisma.customer.findUnique({ where: { userId } })).toMatchObject({
      stripeCustomerId: fresh,
      deletedAt: null,
    });

    // With the customer.deleted event: the portal is 404 (nothing to manage), the next checkout makes a customer.
    const gone = h.fake.deleteCustomer(fresh);
    await emit('customer.deleted', { ...gone, deleted: true });
    const portal = await api.post('/api/v1/portal', { user_id: userId, return_url: urls.success_url });
    expect(portal.status).toBe(404);
    expect(portal.body).toMatchObject({ error: 'customer not found', code: 'customer_not_found' });
    expect((await status(userId, catalog.product.id)).body.status).toBe('none');
    const third = await requestSubscriptionCheckout(h.app, catalog, userId);
    expect(third.status).toBe(200);
    const newest = h.fake.store.checkoutSessions.get(third.body.checkout_session_id)!.customer!;
    expect([old, fresh]).not.toContain(newest);
    const portalAgain = await api.post('/api/v1/portal', { user_id: userId, return_url: urls.success_url });
    expect(portalAgain.status).toBe(200);
  });

  it('a No such customer from the subscription listing before a checkout is handled the same way', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const first = await requestSubscriptionCheckout(h.app, catalog, userId);
    const old = h.fake.store.checkoutSessions.get(first.body.checkout_session_id)!.customer!;
    h.fake.fault({
      path: /^\/v1\/subscriptions$/,
      method: 'GET',
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: `No such customer: '${old}'`,
    });
    const again = await requestSubscriptionCheckout(h.app, catalog, userId);
    expect(again.status).toBe(200);
    expect(h.fake.store.checkoutSessions.get(again.body.checkout_session_id)!.customer).not.toBe(old);
  });

  it('two first checkouts racing after a deletion make one new customer', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const first = await requestSubscriptionCheckout(h.app, catalog, userId);
    const old = h.fake.store.checkoutSessions.get(first.body.checkout_session_id)!.customer!;
    await emit('customer.deleted', { ...h.fake.deleteCustomer(old), deleted: true });
    const before = h.fake.counters.customers;
    const [a, b] = await Promise.all([
      requestSubscriptionCheckout(h.app, catalog, userId),
      requestSubscriptionCheckout(h.app, catalog, userId),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const customers = new Set(
      [a, b].map((r) => h.fake.store.checkoutSessions.get(r.body.checkout_session_id)!.customer),
    );
    expect(customers.size).toBe(1);
    expect(h.fake.counters.customers).toBe(before + 1);
  });
});

describe('4. purchases', () => {
  it('a one-time purchase, its partial and full refund and a dispute are reflected', async () => {
    const { oneTime } = seedCatalog(h.fake);
    const extra = seedCatalog(h.fake, 'extra').oneTime;
    const userId = newUserId();
    expect((await api.get(`/api/v1/purchases/${userId}`)).body).toEqual({ user_id: userId, purchases: [] });
    const session = await buyOnce(userId, [oneTime, extra]);
    await emit('checkout.session.completed', session);
    const list = async () => (await api.get(`/api/v1/purchases/${userId}`)).body.purchases;
    expect(await list()).toEqual([
      {
        purchase_id: session.id,
        status: 'paid',
        amount_total: 500 + 2 * 500,
        amount_refunded: 0,
        currency: 'usd',
        created_at: expect.any(String),
        items: [
          { price_id: oneTime.id, product_id: oneTime.product, quantity: 1, amount_total: 500 },
          { price_id: extra.id, product_id: extra.product, quantity: 2, amount_total: 1000 },
        ],
      },
    ]);

    await emit('charge.refunded', h.fake.refund(session.id, 500));
    expect((await list())[0]).toMatchObject({ status: 'partially_refunded', amount_refunded: 500 });
    const older = h.fake.logEvent('charge.refunded', {
      ...h.fake.store.checkoutSessions.get(session.id),
      amount_refunded: 0,
      payment_intent: session.payment_intent,
    });
    await emit('charge.refunded', h.fake.refund(session.id));
    expect((await list())[0]).toMatchObject({ status: 'refunded', amount_refunded: 1500 });
    // A late event with a smaller refunded amount does not undo the refund.
    await deliver(older);
    expect((await list())[0]).toMatchObject({ status: 'refunded', amount_refunded: 1500 });
  });

  it('a dispute marks the purchase disputed until it is won', async () => {
    const { oneTime } = seedCatalog(h.fake);
    const userId = newUserId();
    const session = await buyOnce(userId, [oneTime]);
    // The dispute event comes first (the checkout event was lost): the purchase is read from Stripe.
    await emit('charge.dispute.created', h.fake.dispute(session.id));
    const list = async () => (await api.get(`/api/v1/purchases/${userId}`)).body.purchases;
    expect(await list()).toEqual([expect.objectContaining({ purchase_id: session.id, status: 'disputed' })]);
    await emit('charge.dispute.closed', h.fake.dispute(session.id, 'won'));
    expect((await list())[0].status).toBe('paid');
  });

  it('an async payment is pending, then paid or failed', async () => {
    const { oneTime } = seedCatalog(h.fake);
    const userId = newUserId();
    const list = async () => (await api.get(`/api/v1/purchases/${userId}`)).body.purchases;
    const ok = await buyOnce(userId, [oneTime], { async: true });
    await emit('checkout.session.completed', ok);
    expect((await list())[0]).toMatchObject({ purchase_id: ok.id, status: 'pending' });
    await emit('checkout.session.async_payment_succeeded', h.fake.settleAsyncPayment(ok.id, true));
    expect((await list())[0].status).toBe('paid');

    const bad = await buyOnce(userId, [oneTime], { async: true });
    await emit('checkout.session.completed', bad);
    await emit('checkout.session.async_payment_failed', h.fake.settleAsyncPayment(bad.id, false));
    // A replayed completion event does not move it back to pending.
    await emit('checkout.session.completed', bad);
    const statuses = Object.fromEntries(
      (await list()).map((p: { purchase_id: string; status: string }) => [p.purchase_id, p.status]),
    );
    expect(statuses).toEqual({ [ok.id]: 'paid', [bad.id]: 'failed' });
  });
});

describe('5. reconciliation', () => {
  it('one run replays the events whose delivery failed and the database converges', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const sub = await requestSubscriptionCheckout(h.app, catalog, userId);
    const subSession = h.fake.completeCheckoutSession(sub.body.checkout_session_id);
    const purchase = await buyOnce(userId, [catalog.oneTime]);
    // Every webhook delivery of these fails (the service was down).
    h.fake.logEvent('checkout.session.completed', subSession, { delivered: false });
    h.fake.logEvent('checkout.session.completed', purchase, { delivered: false });
    h.fake.logEvent('charge.refunded', h.fake.refund(purchase.id, 200), { delivered: false });
    h.fake.updateSubscription(subSession.subscription!, { status: 'past_due' });
    h.fake.logEvent(
      'customer.subscription.updated',
      h.fake.store.subscriptions.get(subSession.subscription!),
      {
        delivered: false,
      },
    );
    h.fake.setEntitlements(subSession.customer!, ['pro_models']);
    h.fake.logEvent(
      'entitlements.active_entitlement_summary.updated',
      h.fake.setEntitlements(subSession.customer!, ['pro_models']),
      { delivered: false },
    );
    expect(await h.prisma.purchase.count({ where: { userId } })).toBe(0);
    expect(await h.prisma.subscription.count({ where: { userId } })).toBe(0);

    const deps = h.deps({ PAYMENT_RECONCILE_BACKFILL_BATCH: '1' });
    const report = await runReconciliation(deps);
    expect(report.events).toMatchObject({ failed: 0 });
    expect(report.events.applied).toBeGreaterThanOrEqual(5);
    expect(await h.prisma.subscription.findUnique({ where: { id: subSession.subscription! } })).toMatchObject(
      {
        userId,
        status: 'past_due',
      },
    );
    const purchases = (await api.get(`/api/v1/purchases/${userId}`)).body.purchases;
    expect(purchases).toEqual([
      expect.objectContaining({ purchase_id: purchase.id, status: 'partially_refunded' }),
    ]);
    expect((await api.get(`/api/v1/entitlements/${userId}`)).body.entitlements).toEqual([
      { lookup_key: 'pro_models', feature_id: 'feat_pro_models' },
    ]);

    // A second run finds nothing new to apply and changes nothing.
    const again = await runReconciliation(deps);
    expect(again.events.failed).toBe(0);
    expect(await h.prisma.purchase.count({ where: { userId } })).toBe(1);
  });

  it('the backfill repairs a customer whose events are gone, batch by batch with a cursor, and prunes old event ids', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const sub = await requestSubscriptionCheckout(h.app, catalog, userId);
    h.fake.completeCheckoutSession(sub.body.checkout_session_id);
    await h.prisma.webhookEvent.create({
      data: {
        id: 'evt_old',
        type: 'x',
        stripeCreatedAt: new Date(0),
        processedAt: new Date(Date.now() - 50 * 86_400_000),
      },
    });
    const deps = h.deps({ PAYMENT_RECONCILE_BACKFILL_BATCH: '100000' });
    const report = await runReconciliation(deps);
    expect(report.customers.complete).toBe(true);
    expect(report.customers.failed).toBe(0);
    expect(report.pruned).toBeGreaterThanOrEqual(1);
    expect(await h.prisma.webhookEvent.findUnique({ where: { id: 'evt_old' } })).toBeNull();
    expect(await h.prisma.subscription.count({ where: { userId, status: 'active' } })).toBe(1);
  });
});

describe('6. entitlements', () => {
  it('an entitlement change in Stripe is visible without a deploy', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const checkout = await requestSubscriptionCheckout(h.app, catalog, userId);
    const session = h.fake.completeCheckoutSession(checkout.body.checkout_session_id);
    const customer = session.customer!;
    const keys = async () =>
      (await api.get(`/api/v1/entitlements/${userId}`)).body.entitlements.map(
        (e: { lookup_key: string }) => e.lookup_key,
      );
    await emit(
      'entitlements.active_entitlement_summary.updated',
      h.fake.setEntitlements(customer, ['basic_models']),
    );
    expect(await keys()).toEqual(['basic_models']);
    // Pricing changes in Stripe: the product now grants two features.
    await emit(
      'entitlements.active_entitlement_summary.updated',
      h.fake.setEntitlements(customer, ['pro_models', 'basic_models']),
    );
    expect(await keys()).toEqual(['basic_models', 'pro_models']);
    await emit('entitlements.active_entitlement_summary.updated', h.fake.setEntitlements(customer, []));
    expect(await keys()).toEqual([]);
    expect((await api.get(`/api/v1/entitlements/${newUserId()}`)).body.entitlements).toEqual([]);
  });
});

describe('7. smaller items', () => {
  it('paused, resumed, trial_will_end and payment_action_required are reflected', async () => {
    const catalog = seedCatalog(h.fake);
    const userId = newUserId();
    const checkout = await requestSubscriptionCheckout(h.app, catalog, userId);
    const session = h.fake.completeCheckoutSession(checkout.body.checkout_session_id);
    await emit('checkout.session.completed', session);
    const id = session.subscription!;
    await emit('customer.subscription.paused', h.fake.updateSubscription(id, { status: 'paused' }));
    expect((await status(userId, catalog.product.id)).body.status).toBe('unpaid');
    await emit('customer.subscription.resumed', h.fake.updateSubscription(id, { status: 'active' }));
    expect((await status(userId, catalog.product.id)).body.status).toBe('active');
    await emit('customer.subscription.trial_will_end', h.fake.updateSubscription(id, { status: 'trialing' }));
    expect((await status(userId, catalog.product.id)).body.status).toBe('trialing');
    expect(
      await h.prisma.webhookEvent.count({ where: { type: 'customer.subscription.trial_will_end' } }),
    ).toBe(1);
    // A payment needing the customer's action (3-D Secure): the subscription Stripe now has is stored.
    h.fake.updateSubscription(id, { status: 'past_due' });
    await emit('invoice.payment_action_required', {
      id: 'in_action',
      parent: { type: 'subscription_details', subscription_details: { subscription: id } },
    });
    expect((await status(userId, catalog.product.id)).body.status).toBe('past_due');
  });
});
