import { perTestFile } from '@platform/testing';
import request from 'supertest';
import { checkPriceCurrencies } from '../src/usage/currency-check';
import { createMeterDirectory } from '../src/usage/meter-directory';
import { readMeterConfig } from '../src/usage/meters';
import type { UsageSender } from '../src/usage/sender';
import { API_KEY, newUserId, startHarness } from './support/harness';
import {
  eventually,
  postUsage,
  startTestSender,
  subscribeToMeter,
  USAGE_ENV,
  usageEvent,
} from './support/usage';

const h = perTestFile(startHarness);
let app: ReturnType<typeof h.buildApp>;
let senders: UsageSender[] = [];

const COST_ENV = { ...USAGE_ENV, PAYMENT_USAGE_METER_CURRENCIES: 'cost=usd' };

beforeAll(() => {
  app = h.buildApp(COST_ENV);
  h.fake.meters.seed({ event_name: 'ai_tokens' });
  h.fake.meters.seed({ event_name: 'ai_cost' });
});
afterEach(async () => {
  await Promise.all(senders.map((s) => s.stop()));
  senders = [];
});

function start(env: Record<string, string> = {}) {
  const sender = startTestSender(h, { PAYMENT_USAGE_METER_CURRENCIES: 'cost=usd', ...env });
  senders.push(sender);
  return sender;
}

const rows = (ids: string[]) =>
  h.prisma.usageEvent.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } });
const statuses = async (ids: string[]) => [...new Set((await rows(ids)).map((r) => r.status))];
const billable = (userId: string, meter?: string) =>
  request(app)
    .get(`/api/v1/usage-events/billable/${userId}${meter ? `?meter=${meter}` : ''}`)
    .set('X-API-Key', API_KEY);
const stripeCustomersOf = (userId: string) =>
  [...h.fake.store.customers.values()].filter((c) => c.metadata.user_id === userId);

describe('billable or held', () => {
  test('usage of a user without a billable subscription is held, then sent when one appears', async () => {
    const userId = newUserId('held');
    const periodStart = new Date(h.clock.now().getTime() - 3_600_000);
    const events = [usageEvent({ user_id: userId, value: 5 }), usageEvent({ user_id: userId, value: 7 })];
    const ids = events.map((e) => e.id);
    await postUsage(app, events).expect(200);
    start();
    await eventually(async () => (await statuses(ids)).join() === 'unbillable');
    for (const row of await rows(ids))
      expect(row.holdReason).toBe('no active subscription item with a price on meter tokens');
    // Nothing reached Stripe: no meter event, and no customer made up for the usage.
    expect(h.fake.meters.events().filter((e) => ids.includes(e.identifier))).toEqual([]);
    expect(stripeCustomersOf(userId)).toEqual([]);
    await eventually(async () =>
      /payment_usage_outbox_held\{[^}]*state="unbillable"[^}]*\} [1-9]/.test(
        (await request(app).get('/metrics')).text,
      ),
    );

    expect((await billable(userId)).body).toMatchObject({ billable: false, meter: 'tokens' });

    // A subscription Stripe has (payment learns it by webhook or sync) with a metered price on the meter.
    const { customer, price, subscription } = await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart,
    });
    expect((await billable(userId)).body).toEqual({
      billable: true,
      meter: 'tokens',
      subscription_id: subscription.id,
      price_id: price.id,
      reason: null,
    });
    await eventually(async () => (await statuses(ids)).join() === 'sent');
    expect(h.fake.meters.total('ai_tokens', customer)).toBe(12);
    for (const id of ids) expect(h.fake.meters.acceptedCount(id)).toBe(1);
  });

  test('an active subscription without a price on the meter does not make usage billable', async () => {
    const userId = newUserId('licensed');
    const customer = h.fake.seedCustomer({ metadata: { user_id: userId } });
    await h.prisma.customer.create({
      data: { userId, stripeCustomerId: customer.id, email: 'l@example.com' },
    });
    const flat = h.fake.seedPrice({ unit_amount: 900, recurring: { interval: 'month' } });
    h.fake.seedSubscription({ customer: customer.id, items: [{ price: flat.id }] });
    await request(app).post(`/api/v1/sync/${userId}`).set('X-API-Key', API_KEY).expect(200);
    const event = usageEvent({ user_id: userId, value: 3 });
    await postUsage(app, [event]).expect(200);
    start();
    await eventually(async () => (await statuses([event.id])).join() === 'unbillable');
    expect(h.fake.meters.acceptedCount(event.id)).toBe(0);
    expect((await billable(userId)).body).toMatchObject({
      billable: false,
      reason: 'no active subscription item with a price on meter tokens',
    });
    expect((await billable(userId, 'gpu')).status).toBe(400);
  });

  test('a currency mismatch is refused: cost usage on a price in another currency is held, never sent', async () => {
    const userId = newUserId('eur');
    const { price } = await subscribeToMeter(h, app, userId, 'ai_cost', {
      currency: 'eur',
      periodStart: new Date(h.clock.now().getTime() - 3_600_000),
    });
    // Checked on the subscription change (here the sync storing it) ...
    await eventually(async () =>
      h.logs.lines.some(
        (l) => l.includes(price.id) && l.includes('is in eur, not usd') && l.includes(userId),
      ),
    );
    // ... and at start, over every price on the meter.
    const deps = h.deps(COST_ENV);
    const meters = readMeterConfig(deps.env);
    const atStart = await checkPriceCurrencies({
      ...deps,
      meters,
      meterDirectory: createMeterDirectory(deps.stripe),
    });
    expect(atStart).toContainEqual({ meter: 'cost', priceId: price.id, currency: 'eur', expected: 'usd' });

    const event = usageEvent({ user_id: userId, meter: 'cost', value: 1500 });
    await postUsage(app, [event]).expect(200);
    start();
    await eventually(async () => (await statuses([event.id])).join() === 'unbillable');
    const [row] = await rows([event.id]);
    expect(row?.holdReason).toBe('currency_mismatch: the price on meter cost is in eur, not usd');
    expect(h.fake.meters.acceptedCount(event.id)).toBe(0);
    expect((await billable(userId, 'cost')).body).toMatchObject({ billable: false });
  });
});
