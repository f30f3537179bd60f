import { perTestFile, signWebhookPayload } from '@platform/testing';
import request from 'supertest';
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
const EVENT_SECRET = 'whsec_usage_thin_events';
let app: ReturnType<typeof h.buildApp>;
let senders: UsageSender[] = [];

beforeAll(() => {
  app = h.buildApp({ ...USAGE_ENV, STRIPE_EVENT_DESTINATION_SECRET: EVENT_SECRET });
  h.fake.meters.seed({ event_name: 'ai_tokens' });
});
afterEach(async () => {
  await Promise.all(senders.map((s) => s.stop()));
  senders = [];
  h.fake.clearFaults();
});

function start(env: Record<string, string> = {}) {
  const sender = startTestSender(h, env);
  senders.push(sender);
  return sender;
}

async function pendingOf(ids: string[]) {
  return h.prisma.usageEvent.count({ where: { id: { in: ids }, status: 'pending' } });
}

/** Posts `perUser` events of value 1..perUser for each of `users` new subscribed users; returns them and the ids. */
async function ingest(users: number, perUser: number) {
  const userIds = Array.from({ length: users }, () => newUserId('meter'));
  const start = new Date(h.clock.now().getTime() - 60_000);
  for (const userId of userIds) await subscribeToMeter(h, app, userId, 'ai_tokens', { periodStart: start });
  const events = userIds.flatMap((user_id) =>
    Array.from({ length: perUser }, (_, i) => usageEvent({ user_id, value: i + 1 })),
  );
  for (let i = 0; i < events.length; i += 500) await postUsage(app, events.slice(i, i + 500)).expect(200);
  return { userIds, ids: events.map((e) => e.id), perUserTotal: (perUser * (perUser + 1)) / 2 };
}

async function customerOf(userId: string): Promise<string> {
  const row = await h.prisma.customer.findUnique({ where: { userId } });
  if (!row) throw new Error(`no customer for ${userId}`);
  return row.stripeCustomerId;
}

const meterCalls = (status: number) =>
  h.fake.requests.filter((r) => r.path === '/v1/billing/meter_events' && r.status === status).length;

describe('usage sender', () => {
  test('after Stripe answered 429 and then 500 for a while, the fake holds exact totals', async () => {
    const before200 = meterCalls(200);
    const { userIds, ids, perUserTotal } = await ingest(3, 20);
    // "For a while": until the sender has met each answer at least twice (its backoff in between).
    h.fake.meters.outage({ status: 429, forMs: 60_000, retryAfterSeconds: 1 });
    start();
    await eventually(async () => meterCalls(429) >= 2);
    h.fake.clearFaults();
    h.fake.meters.outage({ status: 500, forMs: 60_000 });
    await eventually(async () => meterCalls(500) >= 2);
    h.fake.clearFaults();
    await eventually(async () => (await pendingOf(ids)) === 0, 30_000);
    for (const userId of userIds)
      expect(h.fake.meters.total('ai_tokens', await customerOf(userId))).toBe(perUserTotal);
    expect(meterCalls(200) - before200).toBe(ids.length);
    expect(h.fake.meters.duplicates()).toBe(0);
    const rows = await h.prisma.usageEvent.findMany({ where: { id: { in: ids } } });
    expect(rows.every((r) => r.status === 'sent' && r.sentAt !== null)).toBe(true);
  });

  test('two senders drain one outbox without sending any event twice', async () => {
    const before200 = meterCalls(200);
    const { userIds, ids, perUserTotal } = await ingest(4, 50);
    start({ PAYMENT_USAGE_SENDER_BATCH: '7' });
    start({ PAYMENT_USAGE_SENDER_BATCH: '7' });
    await eventually(async () => (await pendingOf(ids)) === 0, 30_000);
    expect(meterCalls(200) - before200).toBe(ids.length);
    for (const id of ids) expect(h.fake.meters.acceptedCount(id)).toBe(1);
    for (const userId of userIds)
      expect(h.fake.meters.total('ai_tokens', await customerOf(userId))).toBe(perUserTotal);
  });

  test('an event Stripe refuses is marked failed and counted; the others are sent', async () => {
    const userId = newUserId();
    await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(h.clock.now().getTime() - 60_000),
    });
    const good = usageEvent({ user_id: userId, value: 4 });
    const refused = usageEvent({ user_id: userId, meter: 'cost', value: 9 });
    await postUsage(app, [good, refused]).expect(200);
    start();
    await eventually(async () => (await pendingOf([good.id, refused.id])) === 0);
    const failed = await h.prisma.usageEvent.findUniqueOrThrow({ where: { id: refused.id } });
    expect(failed.status).toBe('failed');
    expect(failed.lastError).toMatch(/No active meter/);
    expect(h.fake.meters.total('ai_tokens', await customerOf(userId))).toBeGreaterThanOrEqual(4);
    await eventually(async () =>
      /payment_usage_outbox_failed\{[^}]*\} [1-9]/.test((await request(app).get('/metrics')).text),
    );
    const ready = await request(app).get('/health/ready').expect(200);
    expect(ready.body.checks.usage_outbox).toBe('up');
    expect(ready.body.details.usage_outbox.failed).toBeGreaterThanOrEqual(1);
  });

  test('lag shows in /metrics and readiness details while Stripe is down, and readiness stays up', async () => {
    const userId = newUserId();
    await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(h.clock.now().getTime() - 60_000),
    });
    h.fake.meters.outage({ status: 500, forMs: 60_000 });
    const event = usageEvent({ user_id: userId, value: 2 });
    await postUsage(app, [event]).expect(200);
    const sender = start();
    await eventually(async () => sender.status().lastFailure !== null);
    const ready = await request(app).get('/health/ready').expect(200);
    expect(ready.body.details.usage_outbox.pending).toBeGreaterThanOrEqual(1);
    // The gauges read a snapshot up to a second old.
    await eventually(async () =>
      /payment_usage_outbox_pending\{[^}]*\} [1-9]/.test((await request(app).get('/metrics')).text),
    );
    expect((await request(app).get('/metrics')).text).toContain(
      'payment_usage_outbox_oldest_pending_seconds',
    );
    expect(sender.status().lastFailure?.kind).toBe('server_error');
    await sender.stop();
    const row = await h.prisma.usageEvent.findUniqueOrThrow({ where: { id: event.id } });
    expect(row).toMatchObject({ status: 'pending', claimToken: null });
    expect(row.attempts).toBeGreaterThanOrEqual(1);
    h.fake.clearFaults();
    start();
    await eventually(async () => (await pendingOf([event.id])) === 0);
  });
});

describe('meter error reports', () => {
  const deliver = (body: string, secret = EVENT_SECRET) =>
    request(app)
      .post('/webhooks/stripe/events')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signWebhookPayload(body, secret))
      .send(body);

  test('a report is fetched, recorded once, listed and counted', async () => {
    const { event, notification } = h.fake.meters.errorReport('ai_tokens', [
      { code: 'meter_event_customer_not_found', error_count: 2 },
    ]);
    await deliver(notification).expect(200, { received: true });
    await deliver(notification).expect(200);
    const list = await request(app)
      .get('/api/v1/usage-events/error-reports')
      .set('X-API-Key', API_KEY)
      .expect(200);
    const mine = list.body.reports.filter((r: { id: string }) => r.id === event.id);
    expect(mine).toEqual([
      expect.objectContaining({
        error_count: 2,
        error_types: [expect.objectContaining({ code: 'meter_event_customer_not_found' })],
      }),
    ]);
    const metrics = await request(app).get('/metrics');
    expect(metrics.text).toMatch(/payment_meter_error_reports_total\{[^}]*\} 1/);
    expect(
      h.logs.lines.some((l) => l.includes('stripe meter error report') && l.includes('"level":"warn"')),
    ).toBe(true);
  });

  test('an event Stripe does not know is acknowledged and not recorded; Stripe down answers 502', async () => {
    const { notification } = h.fake.meters.errorReport('ai_tokens', []);
    const unknown = JSON.stringify({ ...JSON.parse(notification), id: 'evt_test_unknown_0001' });
    await deliver(unknown).expect(200);
    expect(await h.prisma.meterErrorReport.count({ where: { id: 'evt_test_unknown_0001' } })).toBe(0);
    h.fake.fault({ path: /^\/v2\/core\/events\//, type: 'api_error' });
    const down = await deliver(notification);
    expect(down.status).toBe(502);
    expect(down.body.error).toBe('stripe unavailable');
  });

  test('a bad signature is refused with 400', async () => {
    const { notification } = h.fake.meters.errorReport('ai_tokens', []);
    const res = await deliver(notification, 'whsec_wrong');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid webhook signature');
  });
});
