import type Stripe from 'stripe';
import { findCustomerByUserId } from '../customers/repo';
import type { PrismaClient } from '../generated/prisma/client';
import type { MeterConfig } from './meters';
import { readDailyTotals } from './repo';

/** A total the caller expects (e.g. from the gateway's ledger) for one user, UTC day and meter. */
export type ExpectedTotal = { user_id: string; day: string; meter?: string; value: number };

/** One user, Stripe event name and UTC day, as each side counts it. */
export type ReconcileRow = {
  user_id: string;
  event_name: string;
  day: string;
  /** From the expected totals; undefined when none were given. */
  expected?: number;
  /** Every event the outbox accepted (pending, sent, failed). */
  outbox: number;
  /** Events Stripe acknowledged (status sent). */
  sent: number;
  /** Held, not sent: no billable subscription item (unbillable) or for an operator's decision (review). */
  held: number;
  /** Too late for their period's invoice, not billed by hand yet. */
  late: number;
  /** Late events an operator billed as an invoice item (usage-late --bill). */
  billed_by_hand: number;
  /** Stripe's meter event summary for the user's customer. */
  stripe: number;
};

export type Difference = ReconcileRow & {
  /**
   * expected != outbox (lost or extra upstream); unsent: outbox - held - late != sent (not delivered
   * yet, or refused); held > 0; late > 0; sent != stripe.
   */
  kind: 'expected_vs_outbox' | 'unsent' | 'held' | 'late' | 'sent_vs_stripe';
};

export type ReconcileDeps = { prisma: PrismaClient; stripe: Stripe; meters: MeterConfig };

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Stripe's active meters: event name -> meter id. */
export async function meterIds(stripe: Stripe): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for await (const meter of stripe.billing.meters.list({ status: 'active', limit: 100 }))
    ids.set(meter.event_name, meter.id);
  return ids;
}

/** Stripe's per-day totals of one customer on one meter over the window. */
async function stripeDays(
  stripe: Stripe,
  meterId: string,
  customer: string,
  from: Date,
  to: Date,
): Promise<Map<string, number>> {
  const days = new Map<string, number>();
  const summaries = stripe.billing.meters.listEventSummaries(meterId, {
    customer,
    start_time: from.getTime() / 1000,
    end_time: to.getTime() / 1000,
    value_grouping_window: 'day',
    limit: 100,
  });
  for await (const summary of summaries) {
    const day = dayOf(summary.start_time * 1000);
    days.set(day, (days.get(day) ?? 0) + summary.aggregated_value);
  }
  return days;
}

/**
 * Compares, per user (Stripe customer), meter and UTC day in [from, to), the
 * expected totals (when given), the outbox, and Stripe's meter event
 * summaries; returns every row and the differences. Stripe aggregates meter
 * events asynchronously: reconcile days that ended at least an hour ago.
 */
export async function reconcileUsage(
  deps: ReconcileDeps,
  opts: { from: Date; to: Date; expected?: ExpectedTotal[] },
  ids?: ReadonlyMap<string, string>,
): Promise<{ rows: ReconcileRow[]; differences: Difference[] }> {
  const rows = new Map<string, ReconcileRow>();
  const row = (userId: string, eventName: string, day: string) => {
    const key = JSON.stringify([userId, eventName, day]);
    let found = rows.get(key);
    if (!found) {
      found = {
        user_id: userId,
        event_name: eventName,
        day,
        outbox: 0,
        sent: 0,
        held: 0,
        late: 0,
        billed_by_hand: 0,
        stripe: 0,
      };
      if (opts.expected) found.expected = 0;
      rows.set(key, found);
    }
    return found;
  };
  for (const total of await readDailyTotals(deps.prisma, opts.from, opts.to)) {
    const r = row(total.userId, total.eventName, total.day);
    r.outbox += total.value;
    if (total.status === 'sent') r.sent += total.value;
    if (total.status === 'unbillable' || total.status === 'review') r.held += total.value;
    if (total.status === 'late') r.late += total.value;
    if (total.status === 'billed_by_hand') r.billed_by_hand += total.value;
  }
  for (const total of opts.expected ?? []) {
    const eventName =
      deps.meters.eventNames.get(total.meter ?? deps.meters.defaultMeter) ?? `unknown:${total.meter}`;
    const r = row(total.user_id, eventName, total.day);
    r.expected = (r.expected ?? 0) + total.value;
  }
  ids ??= await meterIds(deps.stripe);
  const pairs = new Map<string, { userId: string; eventName: string }>();
  for (const r of rows.values())
    pairs.set(JSON.stringify([r.user_id, r.event_name]), { userId: r.user_id, eventName: r.event_name });
  for (const { userId, eventName } of pairs.values()) {
    const meterId = ids.get(eventName);
    const customer = await findCustomerByUserId(deps.prisma, userId);
    if (!meterId || !customer) continue;
    const days = await stripeDays(deps.stripe, meterId, customer.stripeCustomerId, opts.from, opts.to);
    for (const [day, value] of days) if (value !== 0) row(userId, eventName, day).stripe += value;
  }
  const sorted = [...rows.values()].sort((a, b) =>
    `${a.user_id}\u0000${a.event_name}\u0000${a.day}`.localeCompare(
      `${b.user_id}\u0000${b.event_name}\u0000${b.day}`,
    ),
  );
  const differences: Difference[] = [];
  for (const r of sorted) {
    if (r.expected !== undefined && r.expected !== r.outbox)
      differences.push({ ...r, kind: 'expected_vs_outbox' });
    if (r.outbox - r.held - r.late - r.billed_by_hand !== r.sent) differences.push({ ...r, kind: 'unsent' });
    if (r.held > 0) differences.push({ ...r, kind: 'held' });
    if (r.late > 0) differences.push({ ...r, kind: 'late' });
    if (r.sent !== r.stripe) differences.push({ ...r, kind: 'sent_vs_stripe' });
  }
  return { rows: sorted, differences };
}

/** The UTC days [from, to] as the half-open interval of instants the comparison covers. */
export function dayWindow(fromDay: string, toDay: string): { from: Date; to: Date } {
  const from = new Date(`${fromDay}T00:00:00.000Z`);
  const to = new Date(new Date(`${toDay}T00:00:00.000Z`).getTime() + DAY_MS);
  return { from, to };
}
