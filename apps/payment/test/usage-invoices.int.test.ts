import { perTestFile } from '@platform/testing';
import { runLateCli } from '../src/usage/late-cli';
import { readMeterConfig } from '../src/usage/meters';
import { runReconcileCli } from '../src/usage/reconcile-cli';
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
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let app: ReturnType<typeof h.buildApp>;

beforeAll(() => {
  app = h.buildApp(USAGE_ENV);
  h.fake.meters.seed({ event_name: 'ai_tokens' });
});

async function reconcile(from: Date, to: Date) {
  const out: string[] = [];
  const deps = h.deps(USAGE_ENV);
  const meters = readMeterConfig(deps.env);
  if (!meters) throw new Error('meters not configured');
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const code = await runReconcileCli(
    { prisma: h.prisma, stripe: deps.stripe, meters },
    ['--from', day(from), '--to', day(to), '--json'],
    {
      readFile: async () => '',
      readStdin: async () => '',
      out: (line) => out.push(line),
      err: () => undefined,
      now: () => new Date(),
    },
  );
  return { code, report: JSON.parse(out.join('\n')) };
}

async function late(argv: string[]): Promise<string> {
  const out: string[] = [];
  const code = await runLateCli({ prisma: h.prisma, stripe: h.deps().stripe }, argv, {
    out: (line) => out.push(line),
    err: (line) => out.push(line),
  });
  expect(code).toBe(0);
  return out.join('\n');
}

/** Runs a sender until every row of `ids` left `pending`, then stops it. */
async function drain(ids: string[]) {
  const sender: UsageSender = startTestSender(h);
  try {
    await eventually(
      async () => (await h.prisma.usageEvent.count({ where: { id: { in: ids }, status: 'pending' } })) === 0,
    );
  } finally {
    await sender.stop();
  }
}

const statusOf = async (id: string) =>
  (await h.prisma.usageEvent.findUniqueOrThrow({ where: { id } })).status;

describe('usage and invoices across a period end', () => {
  test('a payment outage across a period end: usage within the grace is invoiced, later usage is reported late with its amount', async () => {
    const c0 = h.clock.now().getTime();
    const userId = newUserId('period');
    const periodEnd = new Date(c0 + DAY);
    const { customer, subscription } = await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(c0 - HOUR),
      periodEnd,
    });
    const at = (ms: number) => new Date(ms).toISOString();
    const e1 = usageEvent({ user_id: userId, value: 5, timestamp: at(c0 - 30 * MINUTE) });
    await postUsage(app, [e1]).expect(200);
    await drain([e1.id]);

    // Payment is down across the period end; the gateway keeps e2 and e3 (used before the end).
    const e2 = usageEvent({ user_id: userId, value: 7, timestamp: at(periodEnd.getTime() - 10 * MINUTE) });
    const e3 = usageEvent({ user_id: userId, value: 11, timestamp: at(periodEnd.getTime() - 5 * MINUTE) });
    h.clock.set(periodEnd);
    const invoice = h.fake.invoices.closePeriod(subscription.id);

    // Back within Stripe's finalization grace: e2 is sent and lands on the period's invoice.
    h.clock.set(new Date(periodEnd.getTime() + 20 * MINUTE));
    await postUsage(app, [e2]).expect(200);
    await drain([e2.id]);
    expect(await statusOf(e2.id)).toBe('sent');

    // e3 arrives after the invoice was finalized: not sent (Stripe would meter it on no invoice), but late.
    h.clock.set(new Date(periodEnd.getTime() + 2 * HOUR));
    await postUsage(app, [e3]).expect(200);
    await drain([e3.id]);
    expect(await statusOf(e3.id)).toBe('late');
    expect(h.fake.meters.acceptedCount(e3.id)).toBe(0);
    expect(
      h.logs.lines.some((l) => l.includes('held as late') && l.includes(userId) && l.includes('"value":11')),
    ).toBe(true);

    const [finalized] = h.fake.invoices.list(customer);
    expect(finalized).toMatchObject({ id: invoice.id, status: 'open' });
    expect(finalized?.lines.data[0]?.quantity).toBe(12);

    const { code, report } = await reconcile(new Date(c0 - HOUR), periodEnd);
    expect(code).toBe(1);
    const closed = report.invoice_rows.find((r: { invoice: string }) => r.invoice === invoice.id);
    expect(closed).toMatchObject({
      user_id: userId,
      outbox: 12,
      stripe: 12,
      invoice_quantity: 12,
      late: 11,
      held: 0,
    });
    expect(report.invoice_differences.filter((d: { user_id: string }) => d.user_id === userId)).toEqual([
      expect.objectContaining({ kind: 'late', invoice: invoice.id, late: 11 }),
    ]);

    // The documented command lists it with its amount (11 at 2 per unit), then bills it by hand, once.
    const listed = await late(['--user', userId]);
    expect(listed).toContain(`LATE user=${userId} meter=tokens events=1 value=11`);
    expect(listed).toContain('amount=22 usd');
    await late(['--user', userId, '--bill']);
    await late(['--user', userId, '--bill']);
    expect(h.fake.invoices.items(customer)).toEqual([
      expect.objectContaining({ amount: 22, currency: 'usd', customer }),
    ]);
    expect(await statusOf(e3.id)).toBe('billed_by_hand');
    const after = await reconcile(new Date(c0 - HOUR), periodEnd);
    expect(after.report.invoice_differences.filter((d: { user_id: string }) => d.user_id === userId)).toEqual(
      [],
    );
  });

  test('a planted invoice mismatch is found: usage Stripe metered after the invoice was finalized', async () => {
    h.clock.set(new Date());
    const c0 = h.clock.now().getTime();
    const userId = newUserId('planted');
    const periodEnd = new Date(c0 + DAY);
    const { customer, subscription } = await subscribeToMeter(h, app, userId, 'ai_tokens', {
      periodStart: new Date(c0 - HOUR),
      periodEnd,
    });
    const e1 = usageEvent({ user_id: userId, value: 9, timestamp: new Date(c0 - MINUTE).toISOString() });
    await postUsage(app, [e1]).expect(200);
    await drain([e1.id]);

    // Upcoming invoice, meter and outbox agree on the open period.
    const open = await reconcile(new Date(c0 - HOUR), new Date(c0));
    expect(open.report.invoice_rows.filter((r: { user_id: string }) => r.user_id === userId)).toEqual([
      expect.objectContaining({ invoice: 'upcoming', outbox: 9, stripe: 9, invoice_quantity: 9 }),
    ]);
    expect(open.report.invoice_differences.filter((d: { user_id: string }) => d.user_id === userId)).toEqual(
      [],
    );

    // Planted: the period ends, its invoice is finalized, then usage of that period reaches the meter
    // straight (not through payment): on the meter, on no invoice.
    h.clock.set(periodEnd);
    const invoice = h.fake.invoices.closePeriod(subscription.id);
    h.clock.set(new Date(periodEnd.getTime() + 2 * HOUR));
    await h.deps().stripe.billing.meterEvents.create({
      event_name: 'ai_tokens',
      identifier: `planted-${userId}`,
      timestamp: Math.floor((c0 + HOUR) / 1000),
      payload: { stripe_customer_id: customer, value: '4' },
    });
    const { code, report } = await reconcile(new Date(c0 - HOUR), periodEnd);
    expect(code).toBe(1);
    const mine = report.invoice_differences.filter((d: { user_id: string }) => d.user_id === userId);
    expect(mine.map((d: { kind: string }) => d.kind).sort()).toEqual(['sent_vs_stripe', 'stripe_vs_invoice']);
    expect(mine[0]).toMatchObject({ invoice: invoice.id, outbox: 9, stripe: 13, invoice_quantity: 9 });
  });
});
