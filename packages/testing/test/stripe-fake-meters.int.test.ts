import Stripe from 'stripe';
import { type StripeFake, signWebhookPayload, startStripeFake } from '../src/stripe-fake';

const KEY = 'sk_test_fake_meters_1';
let fake: StripeFake;
let stripe: Stripe;

beforeEach(async () => {
  fake = await startStripeFake();
  stripe = new Stripe(KEY, fake.sdkConfig());
});
afterEach(() => fake.close());

async function rejection(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await promise;
  } catch (error) {
    return error as Stripe.errors.StripeError;
  }
  throw new Error('expected the Stripe call to fail');
}

const now = () => Math.floor(Date.now() / 1000);

describe('billing meters', () => {
  test('a meter is created and listed as stripe-node sends them', async () => {
    const meter = await stripe.billing.meters.create({
      display_name: 'AI tokens',
      event_name: 'ai_tokens',
      default_aggregation: { formula: 'sum' },
    });
    expect(meter).toMatchObject({ object: 'billing.meter', event_name: 'ai_tokens', status: 'active' });
    expect(meter.customer_mapping.event_payload_key).toBe('stripe_customer_id');
    const listed = await stripe.billing.meters.list({ status: 'active' });
    expect(listed.data.map((m) => m.id)).toEqual([meter.id]);
    const unknown = await rejection(
      stripe.billing.meters.create({ event_name: 'x' } as unknown as Stripe.Billing.MeterCreateParams),
    );
    expect(unknown.message).toMatch(/Missing required param/);
  });

  test('meter events count once per identifier within 24 h and sum per customer and day', async () => {
    fake.meters.seed({ event_name: 'ai_tokens' });
    const customer = fake.seedCustomer({ email: 'm@example.com' });
    const day = Math.floor(now() / 86_400) * 86_400;
    const send = (identifier: string, value: number, timestamp = day + 60) =>
      stripe.billing.meterEvents.create({
        event_name: 'ai_tokens',
        identifier,
        timestamp,
        payload: { stripe_customer_id: customer.id, value: String(value) },
      });
    await send('e1', 10);
    await send('e2', 5, day - 3600);
    const duplicate = await rejection(send('e1', 10));
    expect(duplicate).toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_already_exists' });
    expect(fake.meters.duplicates()).toBe(1);
    expect(fake.meters.total('ai_tokens', customer.id)).toBe(15);

    const [meter] = fake.store.billingMeters.meters.values();
    const summaries = await stripe.billing.meters
      .listEventSummaries(meter?.id ?? '', {
        customer: customer.id,
        start_time: day - 86_400,
        end_time: day + 86_400,
        value_grouping_window: 'day',
      })
      .autoPagingToArray({ limit: 10 });
    expect(summaries.map((s) => [s.start_time, s.aggregated_value])).toEqual([
      [day - 86_400, 5],
      [day, 10],
    ]);
    const noMeter = await rejection(
      stripe.billing.meterEvents.create({
        event_name: 'nope',
        payload: { stripe_customer_id: customer.id, value: '1' },
      }),
    );
    expect(noMeter.statusCode).toBe(400);
  });

  test('an outage answers 429 with Retry-After, then ends', async () => {
    fake.meters.seed({ event_name: 'ai_tokens' });
    const customer = fake.seedCustomer({});
    fake.meters.outage({ status: 429, forMs: 300, retryAfterSeconds: 2 });
    const send = () =>
      stripe.billing.meterEvents.create({
        event_name: 'ai_tokens',
        identifier: 'o1',
        payload: { stripe_customer_id: customer.id, value: '1' },
      });
    const limited = await rejection(send());
    expect(limited.statusCode).toBe(429);
    expect(limited.headers?.['retry-after']).toBe('2');
    await new Promise((resolve) => setTimeout(resolve, 350));
    await send();
    expect(fake.meters.total('ai_tokens', customer.id)).toBe(1);
  });

  test('an error report is a thin event stripe-node parses and fetches', async () => {
    fake.meters.seed({ event_name: 'ai_tokens' });
    await stripe.billing.meterEvents.create({
      event_name: 'ai_tokens',
      payload: { stripe_customer_id: 'cus_missing', value: '3' },
    });
    const { notification } = fake.meters.errorReport('ai_tokens');
    const secret = 'whsec_fake_meters';
    const parsed = stripe.parseEventNotification(
      notification,
      signWebhookPayload(notification, secret),
      secret,
    );
    expect(parsed.type).toBe('v1.billing.meter.error_report_triggered');
    const event = (await parsed.fetchEvent()) as unknown as { data: { reason: { error_count: number } } };
    expect(event.data.reason.error_count).toBe(1);
  });
});
