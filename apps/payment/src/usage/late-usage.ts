import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import type { PrismaClient } from '../generated/prisma/client';
import { meterIds } from './reconcile';
import { findBillingItems, findLateEvents, markBilledByHand } from './repo';

/** Late events of one user and meter, with what they cost at the meter's price. */
export type LateGroup = {
  user_id: string;
  customer: string;
  meter: string;
  event_name: string;
  events: number;
  value: number;
  first_at: string;
  last_at: string;
  price_id: string | null;
  currency: string | null;
  /** In the currency's minor unit, rounded; null without a price. */
  amount: number | null;
  ids: string[];
};

export type LateDeps = { prisma: PrismaClient; stripe: Stripe };

/**
 * The `late` rows (docs/billing.md, "Late events") grouped per user and meter,
 * priced at the unit amount of the user's metered price on that meter.
 */
export async function listLateUsage(deps: LateDeps, userId?: string): Promise<LateGroup[]> {
  const rows = await findLateEvents(deps.prisma, userId);
  const meterIdOf = await meterIds(deps.stripe);
  const groups = new Map<string, LateGroup>();
  for (const row of rows) {
    const key = `${row.userId}\u0000${row.meter}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        user_id: row.userId,
        customer: '',
        meter: row.meter,
        event_name: row.eventName,
        events: 0,
        value: 0,
        first_at: row.occurredAt.toISOString(),
        last_at: row.occurredAt.toISOString(),
        price_id: null,
        currency: null,
        amount: null,
        ids: [],
      };
      groups.set(key, group);
    }
    group.events += 1;
    group.value += row.value;
    group.last_at = row.occurredAt.toISOString();
    group.ids.push(row.id);
  }
  for (const group of groups.values()) {
    const meterId = meterIdOf.get(group.event_name);
    const [item] = meterId ? await findBillingItems(deps.prisma, group.user_id, meterId) : [];
    if (!item) continue;
    group.customer = item.stripeCustomerId;
    group.price_id = item.priceId;
    const price = await deps.stripe.prices.retrieve(item.priceId);
    const unit = Number(price.unit_amount_decimal ?? price.unit_amount ?? 0);
    group.currency = price.currency;
    group.amount = Math.round(group.value * unit);
  }
  return [...groups.values()];
}

/**
 * Bills each priced group as one invoice item on the customer's next invoice
 * (idempotency key from the rows' ids: a rerun bills nothing twice) and marks
 * its rows `billed_by_hand`. Returns the invoice item ids per group.
 */
export async function billLateUsage(deps: LateDeps, groups: LateGroup[]): Promise<Map<LateGroup, string>> {
  const billed = new Map<LateGroup, string>();
  for (const group of groups) {
    if (group.amount === null || group.currency === null || group.customer === '' || group.amount <= 0)
      continue;
    const key = createHash('sha256')
      .update([...group.ids].sort().join(','))
      .digest('hex');
    const item = await deps.stripe.invoiceItems.create(
      {
        customer: group.customer,
        amount: group.amount,
        currency: group.currency,
        description: `Usage reported after its invoice: ${group.value} on ${group.meter} (${group.first_at} to ${group.last_at})`,
        metadata: { late_usage_events: String(group.events), late_usage_meter: group.meter },
      },
      { idempotencyKey: `late-usage:${key}` },
    );
    await markBilledByHand(deps.prisma, group.ids, item.id);
    billed.set(group, item.id);
  }
  return billed;
}
