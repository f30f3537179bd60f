import Stripe from 'stripe';
import { type StripeFake, startStripeFake } from '../src/stripe-fake';

const KEY = 'sk_test_fake_invoices_1';
let fake: StripeFake;
let stripe: Stripe;
let clock: number;

beforeEach(async () => {
  clock = Math.floor(Date.parse('2026-11-01T00:00:00.000Z') / 1000);
  fake = await startStripeFake({ now: () => clock });
  stripe = new Stripe(KEY, fake.sdkConfig());
});
afterEach(() => fake.close());

/** A customer subscribed to a metered price (2 per unit) on the `ai_tokens` meter, period starting now. */
async function meteredSubscription() {
  const meter = fake.meters.seed({ event_name: 'ai_tokens' });
  const customer = fake.seedCustomer();
  const price = await stripe.prices.create({
    currency: 'usd',
    unit_amount: 2,
    product_data: { name: 'AI tokens' },
    recurring: { interval: 'month', usage_type: 'metered', meter: meter.id },
  });
  const subscription = fake.seedSubscription({ customer: customer.id, items: [{ price: price.id }] });
  const send = (identifier: string, value: number, timestamp = clock) =>
    stripe.billing.meterEvents.create({
      event_name: 'ai_tokens',
      identifier,
      timestamp,
      payload: { stripe_customer_id: customer.id, value: String(value) },
    });
  return { meter, customer, price, subscription, send };
}

describe('24-hour windows', () => {
  test('an idempotency key and an identifier are forgotten after 24 hours: a resend then counts again', async () => {
    const { customer } = await meteredSubscription();
    const timestamp = clock;
    const call = () =>
      stripe.billing.meterEvents.create(
        {
          event_name: 'ai_tokens',
          identifier: 'same',
          timestamp,
          payload: { stripe_customer_id: customer.id, value: '2' },
        },
        { idempotencyKey: 'meter-event:same' },
      );
    await call();
    clock += 3600;
    await call(); // replayed from the idempotency cache
    expect(fake.meters.total('ai_tokens', customer.id)).toBe(2);
    clock += 24 * 3600;
    await call();
    expect(fake.meters.total('ai_tokens', customer.id)).toBe(4);
  });
});

describe('invoices of metered subscriptions', () => {
  test('a metered price is created on its meter; a metered price without a meter is refused', async () => {
    const { price, meter } = await meteredSubscription();
    expect(price.recurring).toMatchObject({ usage_type: 'metered', meter: meter.id });
    const refused = await stripe.prices
      .create({
        currency: 'usd',
        unit_amount: 1,
        product_data: { name: 'x' },
        recurring: { interval: 'month', usage_type: 'metered' },
      })
      .catch((err: Stripe.errors.StripeError) => err);
    expect((refused as Stripe.errors.StripeError).message).toMatch(/must specify a meter/);
  });

  test('the preview counts the open period on the meter, priced', async () => {
    const { customer, subscription, price, send } = await meteredSubscription();
    await send('a', 5);
    await send('b', 7);
    const preview = await stripe.invoices.createPreview({
      customer: customer.id,
      subscription: subscription.id,
    });
    expect(preview.id.startsWith('upcoming_in')).toBe(true);
    expect(preview.lines.data).toHaveLength(1);
    const [line] = preview.lines.data;
    expect(line?.quantity).toBe(12);
    expect(line?.amount).toBe(24);
    expect(line?.pricing?.price_details?.price).toBe(price.id);
    expect(line?.period).toEqual({ start: clock, end: subscription.items.data[0]?.current_period_end });
  });

  test('a closed period takes usage until finalized; usage arriving later is on the meter, not the invoice', async () => {
    const { customer, subscription, send } = await meteredSubscription();
    await send('a', 5);
    clock = subscription.items.data[0]?.current_period_end ?? clock;
    const lastSecond = clock - 1;
    const invoice = fake.invoices.closePeriod(subscription.id);
    expect(invoice.status).toBe('draft');
    clock += 1800;
    await send('b', 3, lastSecond); // within the finalization grace: counted
    clock += 3600;
    await send('c', 100, lastSecond); // after finalization: on the meter only
    const listed = await stripe.invoices.list({ customer: customer.id, subscription: subscription.id });
    expect(listed.data.map((i) => [i.id, i.status])).toEqual([[invoice.id, 'open']]);
    expect(listed.data[0]?.lines.data[0]?.quantity).toBe(8);
    expect(fake.meters.total('ai_tokens', customer.id)).toBe(108);
    // The next period is open and empty.
    const preview = await stripe.invoices.createPreview({
      customer: customer.id,
      subscription: subscription.id,
    });
    expect(preview.period_start).toBe(invoice.period_end);
    expect(preview.lines.data[0]?.quantity).toBe(0);
  });
});
