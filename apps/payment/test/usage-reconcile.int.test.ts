import { perTestFile } from '@platform/testing';
import { readMeterConfig } from '../src/usage/meters';
import { runReconcileCli } from '../src/usage/reconcile-cli';
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
const today = new Date().toISOString().slice(0, 10);

async function reconcile(argv: string[], input = '') {
  const out: string[] = [];
  const err: string[] = [];
  const deps = h.deps(USAGE_ENV);
  const meters = readMeterConfig(deps.env);
  if (!meters) throw new Error('meters not configured');
  const code = await runReconcileCli({ prisma: h.prisma, stripe: deps.stripe, meters }, argv, {
    readFile: async () => input,
    readStdin: async () => input,
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    now: () => new Date(),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('usage reconciliation', () => {
  const userA = newUserId('recon');
  const userB = newUserId('recon');

  beforeAll(async () => {
    h.fake.meters.seed({ event_name: 'ai_tokens' });
    const app = h.buildApp(USAGE_ENV);
    const periodStart = new Date(h.clock.now().getTime() - 60_000);
    for (const userId of [userA, userB]) await subscribeToMeter(h, app, userId, 'ai_tokens', { periodStart });
    const events = [
      usageEvent({ user_id: userA, value: 10 }),
      usageEvent({ user_id: userA, value: 5 }),
      usageEvent({ user_id: userB, value: 7 }),
    ];
    await postUsage(app, events).expect(200);
    const sender = startTestSender(h);
    await eventually(async () => (await h.prisma.usageEvent.count({ where: { status: 'pending' } })) === 0);
    await sender.stop();
  });

  test('agreeing sides exit 0, also with matching expected totals from stdin', async () => {
    expect((await reconcile(['--from', today, '--to', today])).code).toBe(0);
    const expected = JSON.stringify([
      { user_id: userA, day: today, value: 15 },
      { user_id: userB, day: today, meter: 'tokens', value: 7 },
    ]);
    const run = await reconcile(['--from', today, '--expected', '-'], expected);
    expect(run.code).toBe(0);
    expect(run.out).toContain('0 differences');
  });

  test('an expected total the outbox does not hold is printed and exits 1', async () => {
    const expected = JSON.stringify([
      { user_id: userA, day: today, value: 16 },
      { user_id: userB, day: today, value: 7 },
    ]);
    const run = await reconcile(['--from', today, '--expected', 'ledger.json'], expected);
    expect(run.code).toBe(1);
    expect(run.out).toContain(
      `DIFF expected_vs_outbox user=${userA} meter=ai_tokens day=${today} expected=16 outbox=15`,
    );
    expect(run.out).not.toContain(`user=${userB}`);
  });

  test('an event Stripe counted that the outbox never sent is a difference', async () => {
    const customer = await h.prisma.customer.findUniqueOrThrow({ where: { userId: userB } });
    await h.deps().stripe.billing.meterEvents.create({
      event_name: 'ai_tokens',
      identifier: `extra-${userB}`,
      payload: { stripe_customer_id: customer.stripeCustomerId, value: '3' },
    });
    const run = await reconcile(['--from', today, '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.out);
    expect(report.differences).toEqual([
      expect.objectContaining({ kind: 'sent_vs_stripe', user_id: userB, sent: 7, stripe: 10 }),
    ]);
  });

  test('bad arguments or input exit 2', async () => {
    expect((await reconcile(['--from', 'yesterday'])).code).toBe(2);
    expect((await reconcile(['--from', today, '--to', '2000-01-01'])).code).toBe(2);
    expect((await reconcile(['--bogus'])).code).toBe(2);
    expect((await reconcile(['--expected', '-'], '{"not":"an array"}')).code).toBe(2);
  });
});
