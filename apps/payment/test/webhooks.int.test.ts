import { buildEvent, type FakeSubscription, perTestFile, signWebhookPayload } from '@platform/testing';
import request from 'supertest';
import { upsertSubscriptionSnapshot } from '../src/subscriptions/repo';
import {
  API_KEY,
  newUserId,
  requestSubscriptionCheckout,
  seedCatalog,
  startHarness,
  WEBHOOK_SECRET,
} from './support/harness';

const h = perTestFile(startHarness);
afterEach(() => h.fake.clearFaults());

function deliver(
  event: unknown,
  opts: { secret?: string; tamper?: (raw: string) => string; app?: typeof h.app } = {},
) {
  const raw = JSON.stringify(event);
  const signature = signWebhookPayload(raw, opts.secret ?? WEBHOOK_SECRET);
  return request(opts.app ?? h.app)
    .post('/webhooks/stripe')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', signature)
    .send(opts.tamper ? opts.tamper(raw) : raw);
}

async function subscribedUser(status: FakeSubscription['status'] = 'active') {
  const userId = newUserId();
  const customer = h.fake.seedCustomer({ email: 'a@example.com', metadata: { user_id: userId } });
  await h.prisma.customer.create({ data: { userId, stripeCustomerId: customer.id, email: 'a@example.com' } });
  const { product, monthly } = seedCatalog(h.fake);
  const sub = h.fake.seedSubscription({ customer: customer.id, items: [{ price: monthly.id }], status });
  return { userId, customerId: customer.id, product, monthly, sub };
}

const retrieves = (id: string) =>
  h.fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/subscriptions/${id}`).length;
const nowSeconds = () => Math.floor(Date.now() / 1000);
const stored = (id: string) => h.prisma.subscription.findUnique({ where: { id } });

describe('POST /webhooks/stripe', () => {
  it('stores the subscription as Stripe has it now, not as the event says', async () => {
    const { sub, userId, product } = await subscribedUser();
    const event = buildEvent('customer.subscription.updated', { ...sub, status: 'incomplete' });
    const res = await deliver(event);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    expect(await stored(sub.id)).toMatchObject({ userId, status: 'active' });
    expect(await h.prisma.webhookEvent.findUnique({ where: { id: event.id } })).toMatchObject({
      type: 'customer.subscription.updated',
    });

    const lists = h.fake.requests.filter((r) => r.path === '/v1/subscriptions').length;
    const status = await request(h.app)
      .get(`/api/v1/subscriptions/${userId}/${product.id}`)
      .set('X-API-Key', API_KEY);
    expect(status.body).toMatchObject({ status: 'active', subscription_id: sub.id });
    expect(h.fake.requests.filter((r) => r.path === '/v1/subscriptions').length).toBe(lists);
  });

  describe('signature', () => {
    it('a signature made with another secret is 400 and nothing is written', async () => {
      const { sub } = await subscribedUser();
      const event = buildEvent('customer.subscription.created', sub);
      const res = await deliver(event, { secret: 'whsec_someone_else' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid webhook signature',
        code: 'webhook_signature_invalid',
        request_id: expect.any(String),
      });
      expect(await stored(sub.id)).toBeNull();
      expect(await h.prisma.webhookEvent.findUnique({ where: { id: event.id } })).toBeNull();
      expect(retrieves(sub.id)).toBe(0);
    });

    it('a body changed after signing is 400 and nothing is written', async () => {
      const { sub } = await subscribedUser();
      const event = buildEvent('customer.subscription.created', sub);
      const res = await deliver(event, { tamper: (raw) => raw.replace('"active"', '"canceled"') });
      expect(res.status).toBe(400);
      expect(await stored(sub.id)).toBeNull();
      expect(await h.prisma.webhookEvent.findUnique({ where: { id: event.id } })).toBeNull();
    });

    it('a missing Stripe-Signature header is 400', async () => {
      const res = await request(h.app)
        .post('/webhooks/stripe')
        .set('Content-Type', 'application/json')
        .send('{}');
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid webhook signature');
    });

    it('a signature older than Stripe’s 5-minute tolerance is 400', async () => {
      const { sub } = await subscribedUser();
      const raw = JSON.stringify(buildEvent('customer.subscription.created', sub));
      const res = await request(h.app)
        .post('/webhooks/stripe')
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', signWebhookPayload(raw, WEBHOOK_SECRET, nowSeconds() - 600))
        .send(raw);
      expect(res.status).toBe(400);
    });

    it('without STRIPE_WEBHOOK_SECRET every delivery is 503', async () => {
      const app = h.buildApp({ STRIPE_WEBHOOK_SECRET: undefined });
      const { sub } = await subscribedUser();
      const res = await deliver(buildEvent('customer.subscription.created', sub), { app });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('stripe webhooks are not configured');
      expect(await stored(sub.id)).toBeNull();
    });
  });

  describe('dedupe and ordering', () => {
    it('a redelivered event id is acknowledged without another Stripe read', async () => {
      const { sub } = await subscribedUser();
      const event = buildEvent('customer.subscription.updated', sub);
      await deliver(event).expect(200);
      expect(retrieves(sub.id)).toBe(1);
      h.fake.updateSubscription(sub.id, { status: 'canceled' });
      const again = await deliver(event);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ received: true });
      expect(retrieves(sub.id)).toBe(1);
      expect((await stored(sub.id))?.status).toBe('active');
    });

    it('an event older than one already applied changes nothing', async () => {
      const { sub } = await subscribedUser();
      const t = nowSeconds();
      h.fake.updateSubscription(sub.id, { status: 'past_due' });
      await deliver(
        buildEvent('invoice.payment_failed', { id: 'in_1', subscription: sub.id }, { created: t }),
      ).expect(200);
      expect((await stored(sub.id))?.status).toBe('past_due');

      const older = buildEvent(
        'customer.subscription.updated',
        { ...sub, status: 'active' },
        { created: t - 60 },
      );
      await deliver(older).expect(200);
      expect((await stored(sub.id))?.status).toBe('past_due');
      expect(retrieves(sub.id)).toBe(1);
      expect(await h.prisma.webhookEvent.findUnique({ where: { id: older.id } })).not.toBeNull();
    });

    it('same-second events both re-read Stripe, so the last state wins', async () => {
      const { sub } = await subscribedUser();
      const t = nowSeconds();
      await deliver(buildEvent('customer.subscription.updated', sub, { created: t })).expect(200);
      h.fake.updateSubscription(sub.id, { status: 'canceled' });
      await deliver(buildEvent('customer.subscription.deleted', sub, { created: t })).expect(200);
      expect(retrieves(sub.id)).toBe(2);
      expect((await stored(sub.id))?.status).toBe('canceled');
    });

    it('a Stripe read older than the stored one never overwrites it', async () => {
      const { sub, userId, customerId, product, monthly } = await subscribedUser();
      const snapshot = (status: string) => ({
        id: sub.id,
        stripeCustomerId: customerId,
        status,
        currentPeriodEnd: null,
        stripeCreatedAt: new Date(sub.created * 1000),
        items: [{ id: 'si_x', productId: product.id, priceId: monthly.id, currentPeriodEnd: null }],
      });
      const newer = new Date();
      const older = new Date(newer.getTime() - 1000);
      expect(
        await upsertSubscriptionSnapshot(h.prisma, {
          userId,
          snapshot: snapshot('canceled'),
          syncedAt: newer,
        }),
      ).toBe(true);
      expect(
        await upsertSubscriptionSnapshot(h.prisma, { userId, snapshot: snapshot('active'), syncedAt: older }),
      ).toBe(false);
      expect((await stored(sub.id))?.status).toBe('canceled');
    });
  });

  describe('event kinds', () => {
    it('checkout.session.completed stores the new subscription', async () => {
      const userId = newUserId();
      const { product, monthly } = seedCatalog(h.fake);
      const checkout = await requestSubscriptionCheckout(h.app, { product, monthly }, userId);
      const session = h.fake.completeCheckoutSession(checkout.body.checkout_session_id);
      await deliver(buildEvent('checkout.session.completed', session)).expect(200);
      const row = await stored(session.subscription!);
      expect(row).toMatchObject({ userId, status: 'active' });
      const sub = h.fake.store.subscriptions.get(session.subscription!)!;
      expect(sub.metadata).toEqual({ user_id: userId, product_id: product.id });
    });

    it('a payment-mode checkout.session.completed is acknowledged and recorded', async () => {
      const event = buildEvent('checkout.session.completed', {
        id: 'cs_test_pay',
        mode: 'payment',
        subscription: null,
      });
      await deliver(event).expect(200);
      expect(await h.prisma.webhookEvent.findUnique({ where: { id: event.id } })).not.toBeNull();
    });

    it('invoice.paid finds the subscription under parent.subscription_details', async () => {
      const { sub } = await subscribedUser('past_due');
      h.fake.updateSubscription(sub.id, { status: 'active' });
      const invoice = {
        id: 'in_2',
        parent: { type: 'subscription_details', subscription_details: { subscription: sub.id } },
      };
      await deliver(buildEvent('invoice.paid', invoice)).expect(200);
      expect((await stored(sub.id))?.status).toBe('active');
    });

    it('customer.subscription.deleted of a subscription Stripe no longer returns uses the event', async () => {
      const { sub } = await subscribedUser();
      h.fake.store.subscriptions.delete(sub.id);
      await deliver(buildEvent('customer.subscription.deleted', { ...sub, status: 'canceled' })).expect(200);
      expect((await stored(sub.id))?.status).toBe('canceled');
    });

    it('a subscription of a customer this service does not know is acknowledged, not stored', async () => {
      const customer = h.fake.seedCustomer({});
      const { monthly } = seedCatalog(h.fake);
      const sub = h.fake.seedSubscription({ customer: customer.id, items: [{ price: monthly.id }] });
      await deliver(buildEvent('customer.subscription.created', sub)).expect(200);
      expect(await stored(sub.id)).toBeNull();
    });

    it('other event types are acknowledged without a Stripe call', async () => {
      const before = h.fake.requests.length;
      await deliver(buildEvent('customer.created', { id: 'cus_x' })).expect(200);
      expect(h.fake.requests.length).toBe(before);
    });

    it('when Stripe fails the delivery is 502 and not recorded, so Stripe’s retry applies it', async () => {
      const { sub } = await subscribedUser();
      const event = buildEvent('customer.subscription.updated', sub);
      h.fake.fault({ path: new RegExp(`^/v1/subscriptions/${sub.id}$`), type: 'api_error' });
      const failed = await deliver(event);
      expect(failed.status).toBe(502);
      expect(await h.prisma.webhookEvent.findUnique({ where: { id: event.id } })).toBeNull();
      await deliver(event).expect(200);
      expect((await stored(sub.id))?.status).toBe('active');
    });
  });
});
