import type { PrismaClient } from '../generated/prisma/client';
import { type BillableRow, type BillingRules, usageEventOf } from './events';

/** One expected total, in the shape payment's reconcile takes (`--expected`). */
export type ExpectedTotal = { user_id: string; day: string; meter?: string; value: number };

type Raw = Omit<BillableRow, 'created_at' | 'cost_micros'> & {
  cost_micros: bigint | number;
  created_at: Date;
};

const PAGE = 5000;

/**
 * What the ledger says Stripe should count, per user, meter and UTC day, for
 * records created in [from, to): every record run through the shipper's own
 * rules (usageEventOf), so a record the shipper skips (BYOK, free lane, zero)
 * is skipped here too. Read in pages by row id.
 */
export async function ledgerTotals(
  prisma: PrismaClient,
  rules: BillingRules,
  window: { from: Date; to: Date },
): Promise<ExpectedTotal[]> {
  const totals = new Map<string, ExpectedTotal>();
  let after = 0n;
  for (;;) {
    const page = await prisma.$queryRaw<(Raw & { seq: bigint })[]>`
      SELECT id AS seq, request_id::text AS id, user_id::text AS user_id, project_id, endpoint, lane, model,
             total_tokens, cost_micros, byok, created_at
        FROM usage_records
       WHERE created_at >= ${window.from} AND created_at < ${window.to} AND id > ${after}
       ORDER BY id
       LIMIT ${PAGE}`;
    for (const raw of page) {
      const { event } = usageEventOf(rules, {
        ...raw,
        cost_micros: Number(raw.cost_micros),
        created_at: raw.created_at.toISOString(),
      });
      if (!event) continue;
      const day = event.timestamp.slice(0, 10);
      const key = `${event.user_id}\n${event.meter ?? ''}\n${day}`;
      const total = totals.get(key);
      if (total) total.value += event.value;
      else
        totals.set(key, {
          user_id: event.user_id,
          day,
          ...(event.meter === undefined ? {} : { meter: event.meter }),
          value: event.value,
        });
    }
    const last = page.at(-1);
    if (!last || page.length < PAGE) break;
    after = BigInt(last.seq);
  }
  return [...totals.values()];
}
