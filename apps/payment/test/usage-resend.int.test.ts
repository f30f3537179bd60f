import { perTestFile } from '@platform/testing';
import type { UsageSender } from '../src/usage/sender';
import { newUserId, startHarness } from './support/harness';
import {
  eventually,
  postUsage,
  startTestSender,
  subscribeToMeter,
  USAGE_ENV,
  usageEvent,
} from './support/usage';

const h = perTestFile(startHarness);
const HOUR = 3_600_000;
let app: ReturnType<typeof h.buildApp>;

beforeAll(() => {
  app = h.buildApp(USAGE_ENV);
  h.fake.meters.seed({ event_name: 'ai_tokens' });
});

/** Makes recording `sent` for one row fail in the database, as a payment outage right after Stripe answered. */
async function failMarkSent(id: string) {
  await h.prisma.$executeRawUnsafe(`
    CREATE OR REPLACE FUNCTION fail_mark_sent() RETURNS trigger AS $$
    BEGIN
      IF NEW.status = 'sent' AND NEW.id = '${id}' THEN RAISE EXCEPTION 'payment database unreachable'; END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`);
  await h.prisma.$executeRawUnsafe(
    'CREATE TRIGGER fail_mark_sent BEFORE UPDATE ON usage_events FOR EACH ROW EXECUTE FUNCTION fail_mark_sent()',
  );
  return () => h.prisma.$executeRawUnsafe('DROP TRIGGER fail_mark_sent ON usage_events');
}

async function runSender(until: () => Promise<boolean>) {
  const sender: UsageSender = startTestSender(h, { PAYMENT_USAGE_SENDER_LEASE_SECONDS: '1' });
  try {
    await eventually(until);
  } finally {
    await sender.stop();
  }
}

const rowOf = (id: string) => h.prisma.usageEvent.findUniqueOrThrow({ where: { id } });

describe('resends after 24 hours', () => {
  test('a 25-hour outage between Stripe accepting a row and payment recording it counts it once', async () => {
    const start = Date.now() - 25 * HOUR - 10 * 60_000;
    h.clock.set(new Date(start));
    const userId = newUserId('resend');
    const { customer } = await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(start - HOUR),
    });
    const event = usageEvent({
      user_id: userId,
      value: 6,
      timestamp: new Date(start - 60_000).toISOString(),
    });
    await postUsage(app, [event]).expect(200);

    // Stripe accepts the event; payment fails to record it, and stays down.
    const restore = await failMarkSent(event.id);
    await runSender(async () => h.fake.meters.acceptedCount(event.id) === 1);
    await restore();
    expect((await rowOf(event.id)).status).toBe('pending');

    // 25 hours later (past Stripe's 24 h identifier window) payment is back.
    h.clock.set(new Date(start + 25 * HOUR));
    await runSender(async () => (await rowOf(event.id)).status !== 'pending');
    expect((await rowOf(event.id)).status).toBe('sent');
    expect(h.fake.meters.acceptedCount(event.id)).toBe(1);
    expect(h.fake.meters.total('ai_tokens', customer)).toBe(6);
    expect(h.logs.lines.some((l) => l.includes(event.id) && l.includes('not resent'))).toBe(true);
  });

  test('the documented manual replay of a failed row after 24 hours does not count it twice', async () => {
    const start = Date.now() - 26 * HOUR;
    h.clock.set(new Date(start));
    const userId = newUserId('replay');
    const { customer } = await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(start - HOUR),
    });
    const event = usageEvent({
      user_id: userId,
      value: 4,
      timestamp: new Date(start - 60_000).toISOString(),
    });
    await postUsage(app, [event]).expect(200);
    // A sender's call reached Stripe, which kept the event; its answer was an idempotency error
    // (a key reused with other parameters), so the row was marked failed.
    await h.deps().stripe.billing.meterEvents.create({
      event_name: 'ai_tokens',
      identifier: event.id,
      timestamp: Math.floor(new Date(event.timestamp).getTime() / 1000),
      payload: { stripe_customer_id: customer, value: '4' },
    });
    await h.prisma.usageEvent.update({
      where: { id: event.id },
      data: {
        status: 'failed',
        firstAttemptAt: new Date(start),
        attempts: 1,
        lastError: 'StripeIdempotencyError',
      },
    });

    // A day and more later an operator replays failed rows as docs/billing.md says.
    h.clock.set(new Date(start + 26 * HOUR));
    await h.prisma
      .$executeRaw`UPDATE usage_events SET status = 'pending', next_attempt_at = now() WHERE id = ${event.id} AND status = 'failed'`;
    await runSender(async () => (await rowOf(event.id)).status !== 'pending');
    expect((await rowOf(event.id)).status).toBe('sent');
    expect(h.fake.meters.total('ai_tokens', customer)).toBe(4);
  });

  test('when the meter cannot tell which of two rows it holds, both are held for review, none resent', async () => {
    const start = Date.now() - 27 * HOUR;
    h.clock.set(new Date(start));
    const userId = newUserId('review');
    const { customer } = await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(start - HOUR),
    });
    const minute = Math.floor((start - 120_000) / 60_000) * 60_000;
    const a = usageEvent({ user_id: userId, value: 3, timestamp: new Date(minute + 5_000).toISOString() });
    const b = usageEvent({ user_id: userId, value: 5, timestamp: new Date(minute + 9_000).toISOString() });
    await postUsage(app, [a, b]).expect(200);
    // Both were sent once and not recorded; Stripe holds only one of them.
    await h.deps().stripe.billing.meterEvents.create({
      event_name: 'ai_tokens',
      identifier: a.id,
      timestamp: Math.floor(new Date(a.timestamp).getTime() / 1000),
      payload: { stripe_customer_id: customer, value: '3' },
    });
    await h.prisma.usageEvent.updateMany({
      where: { id: { in: [a.id, b.id] } },
      data: { firstAttemptAt: new Date(start), attempts: 1 },
    });
    h.clock.set(new Date(start + 26 * HOUR));
    await runSender(
      async () =>
        (await h.prisma.usageEvent.count({ where: { id: { in: [a.id, b.id] }, status: 'pending' } })) === 0,
    );
    expect((await rowOf(a.id)).status).toBe('review');
    expect((await rowOf(b.id)).status).toBe('review');
    expect(h.fake.meters.total('ai_tokens', customer)).toBe(3);
  });
});
