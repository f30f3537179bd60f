import { parseArgs } from 'node:util';
import { z } from 'zod';
import { dayWindow, type ExpectedTotal, meterIds, type ReconcileDeps, reconcileUsage } from './reconcile';
import { reconcileInvoices } from './reconcile-invoices';

/** Exit codes of `reconcile`: documented in docs/billing.md. */
export const RECONCILE_EXIT = { same: 0, different: 1, usage: 2 } as const;

const ZDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a day is YYYY-MM-DD');
const ZExpected = z.array(
  z.object({
    user_id: z.string().min(1),
    day: ZDay,
    meter: z.string().optional(),
    value: z.number().int().min(0),
  }),
);

const USAGE = `usage: reconcile [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--expected FILE|-] [--json]
  Compares per user, meter and UTC day the payment outbox with Stripe's meter event
  summaries (and with expected totals, e.g. the gateway ledger's, when given as a JSON
  array of {user_id, day, meter?, value}); then per customer, meter and billing period
  overlapping the days the outbox, the meter summary and the invoice line quantity
  (upcoming invoice for the open period). Days default to yesterday (UTC).
  Exit 0: no difference; 1: differences (each printed); 2: bad arguments or input.`;

export type ReconcileIo = {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  out(line: string): void;
  err(line: string): void;
  now(): Date;
};

/** Runs the command on `argv` (without node and script) and returns its exit code. */
export async function runReconcileCli(deps: ReconcileDeps, argv: string[], io: ReconcileIo): Promise<number> {
  let values: { from?: string; to?: string; expected?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        expected: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return RECONCILE_EXIT.usage;
  }
  if (values.help) {
    io.out(USAGE);
    return RECONCILE_EXIT.same;
  }
  const yesterday = new Date(io.now().getTime() - 86_400_000).toISOString().slice(0, 10);
  const from = ZDay.safeParse(values.from ?? yesterday);
  const to = ZDay.safeParse(values.to ?? values.from ?? yesterday);
  if (!from.success || !to.success || to.data < from.data) {
    io.err(`--from and --to must be days (YYYY-MM-DD), from <= to\n${USAGE}`);
    return RECONCILE_EXIT.usage;
  }
  let expected: ExpectedTotal[] | undefined;
  if (values.expected !== undefined) {
    try {
      const text = values.expected === '-' ? await io.readStdin() : await io.readFile(values.expected);
      expected = ZExpected.parse(JSON.parse(text));
    } catch (err) {
      io.err(`--expected: not a JSON array of {user_id, day, meter?, value}: ${(err as Error).message}`);
      return RECONCILE_EXIT.usage;
    }
  }
  const window = dayWindow(from.data, to.data);
  const ids = await meterIds(deps.stripe);
  const { rows, differences } = await reconcileUsage(deps, { ...window, expected }, ids);
  const invoices = await reconcileInvoices(deps, { ...window, meterIds: ids });
  if (values.json) {
    io.out(
      JSON.stringify(
        {
          from: from.data,
          to: to.data,
          rows: rows.length,
          differences,
          invoice_rows: invoices.rows,
          invoice_differences: invoices.differences,
        },
        null,
        2,
      ),
    );
  } else {
    for (const d of differences) {
      const expectedPart = d.expected === undefined ? '' : ` expected=${d.expected}`;
      io.out(
        `DIFF ${d.kind} user=${d.user_id} meter=${d.event_name} day=${d.day}${expectedPart} outbox=${d.outbox} sent=${d.sent} held=${d.held} late=${d.late} stripe=${d.stripe}`,
      );
    }
    for (const d of invoices.differences)
      io.out(
        `DIFF ${d.kind} user=${d.user_id} meter=${d.event_name} period=${d.period_start}..${d.period_end} invoice=${d.invoice} outbox=${d.outbox} unsent=${d.unsent} held=${d.held} late=${d.late} stripe=${d.stripe} invoice_quantity=${d.invoice_quantity}`,
      );
    io.out(
      `${rows.length} user/meter/day rows and ${invoices.rows.length} customer/meter/period invoice lines compared, ${differences.length + invoices.differences.length} differences (${from.data}..${to.data})`,
    );
  }
  return differences.length + invoices.differences.length === 0
    ? RECONCILE_EXIT.same
    : RECONCILE_EXIT.different;
}
