import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { customerCreateKey } from '../src/customers/ensure-customer';
import { API_KEY, newUserId, seedCatalog, startHarness } from './support/harness';

const h = perTestFile(startHarness);

function stripeCustomersOf(userId: string) {
  return [...h.fake.store.customers.values()].filter((c) => c.metadata.user_id === userId);
}

describe('one Stripe customer per user', () => {
  it('20 concurrent first checkouts create exactly one customer, in Stripe and in the database', async () => {
    const userId = newUserId('race');
    const { product, monthly } = seedCatalog(h.fake);
    const payload = {
      user_id: userId,
      email: 'race@example.com',
      product_id: product.id,
      price_id: monthly.id,
      success_url: 'https://app.example.com/done',
      cancel_url: 'https://app.example.com/cancel',
    };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        request(h.app).post('/api/v1/checkout/subscription').set('X-API-Key', API_KEY).send(payload),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));

    const customers = stripeCustomersOf(userId);
    expect(customers).toHaveLength(1);
    const rows = await h.prisma.customer.findMany({ where: { userId } });
    expect(rows).toEqual([expect.objectContaining({ stripeCustomerId: customers[0]!.id })]);
    const sessionCustomers = new Set(
      responses.map((r) => h.fake.store.checkoutSessions.get(r.body.checkout_session_id)!.customer),
    );
    expect([...sessionCustomers]).toEqual([customers[0]!.id]);
  });

  it('concurrent first checkouts with different e-mails still share one customer', async () => {
    const userId = newUserId('race-mail');
    const { oneTime } = seedCatalog(h.fake);
    const responses = await Promise.all(
      ['one@example.com', 'two@example.com', 'three@example.com'].map((email) =>
        request(h.app).post('/api/v1/checkout/item').set('X-API-Key', API_KEY).send({
          user_id: userId,
          email,
          price_id: oneTime.id,
          success_url: 'https://app.example.com/done',
          cancel_url: 'https://app.example.com/cancel',
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(stripeCustomersOf(userId)).toHaveLength(1);
    expect(await h.prisma.customer.count({ where: { userId } })).toBe(1);
  });

  it('a customer created earlier whose mapping was lost is found again, not duplicated', async () => {
    const userId = newUserId('lost-row');
    // An earlier first checkout created the customer in Stripe, then failed before writing the row.
    const stripe = h.deps().stripe;
    const earlier = await stripe.customers.create(
      { email: 'old@example.com', metadata: { user_id: userId } },
      { idempotencyKey: customerCreateKey(userId) },
    );
    const { oneTime } = seedCatalog(h.fake);
    const res = await request(h.app).post('/api/v1/checkout/item').set('X-API-Key', API_KEY).send({
      user_id: userId,
      email: 'new@example.com',
      price_id: oneTime.id,
      success_url: 'https://app.example.com/done',
      cancel_url: 'https://app.example.com/cancel',
    });
    expect(res.status).toBe(200);
    expect(stripeCustomersOf(userId).map((c) => c.id)).toEqual([earlier.id]);
    expect(h.fake.store.customers.get(earlier.id)?.email).toBe('new@example.com');
    expect(await h.prisma.customer.findUnique({ where: { userId } })).toMatchObject({
      stripeCustomerId: earlier.id,
      email: 'new@example.com',
    });
  });
});
