import type Stripe from 'stripe';
import { findCustomerByUserId } from '../customers/repo';
import type { PrismaClient } from '../generated/prisma/client';
import { isStripeError } from '../stripe-errors';
import { findMeteredItems, readPeriodTotals, readUsersWithUsage } from './repo';

/**
 * One customer, meter and billing period as each side counts it: the outbox
 * (by state), Stripe's meter event summary over the period, and the quantity
 * of the invoice line that bills it (the upcoming invoice for the open
 * period, the period's own invoice for a closed one).
 */
export type InvoiceRow = {
  user_id: string;
  customer: string;
  event_name: string;
  subscription_id: string;
  period_start: string;
  period_end: string;
  /** The invoice id, or `upcoming` for the open period. */
  invoice: string;
  invoice_status: string;
  /** Events of the period Stripe acknowledged (status sent). */
  outbox: number;
  /** Not yet sent (pending) or refused by Stripe (failed). */
  unsent: number;
  /** Held: no billable item (unbillable) or waiting for an operator (review). */
  held: number;
  /** Arrived after the period's invoice was finalized: bill by hand. */
  late: number;
  stripe: number;
  invoice_quantity: number;
};

export type InvoiceDifference = InvoiceRow & {
  kind: 'sent_vs_stripe' | 'stripe_vs_invoice' | 'unsent' | 'held' | 'late';
};

export type InvoiceReconcileDeps = { prisma: PrismaClient; stripe: Stripe };

type Line = { subscription: string; price: string; quantity: number; start: number; end: number };
type InvoiceLines = { invoice: string; status: string; lines: Line[] };

const minute = (seconds: number) => Math.floor(seconds / 60) * 60;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

function linesOf(invoice: Stripe.Invoice, subscription: string): Line[] {
  return invoice.lines.data.flatMap((line) => {
    const price = line.pricing?.price_details?.price;
    const priceId = typeof price === 'string' ? price : price?.id;
    if (!priceId) return [];
    return [
      {
        subscription,
        price: priceId,
        quantity: line.quantity ?? 0,
        start: line.period.start,
        end: line.period.end,
      },
    ];
  });
}

/** The subscription's invoices (every one listed, then the preview of the open period). */
async function invoicesOf(stripe: Stripe, customer: string, subscription: string): Promise<InvoiceLines[]> {
  const out: InvoiceLines[] = [];
  for await (const invoice of stripe.invoices.list({ customer, subscription, limit: 100 }))
    out.push({
      invoice: invoice.id,
      status: invoice.status ?? 'draft',
      lines: linesOf(invoice, subscription),
    });
  try {
    const preview = await stripe.invoices.createPreview({ customer, subscription });
    out.push({ invoice: 'upcoming', status: 'upcoming', lines: linesOf(preview, subscription) });
  } catch (err) {
    // An ended subscription has no upcoming invoice.
    if (!(isStripeError(err) && err.code === 'invoice_upcoming_none')) throw err;
  }
  return out;
}

async function summaryOf(stripe: Stripe, meterId: string, customer: string, start: number, end: number) {
  let total = 0;
  const from = minute(start);
  const to = minute(end);
  if (to <= from) return 0;
  for await (const summary of stripe.billing.meters.listEventSummaries(meterId, {
    customer,
    start_time: from,
    end_time: to,
  }))
    total += summary.aggregated_value;
  return total;
}

function differencesOf(row: InvoiceRow): InvoiceDifference[] {
  const out: InvoiceDifference[] = [];
  if (row.outbox !== row.stripe) out.push({ ...row, kind: 'sent_vs_stripe' });
  if (row.stripe !== row.invoice_quantity) out.push({ ...row, kind: 'stripe_vs_invoice' });
  if (row.unsent > 0 && row.invoice !== 'upcoming') out.push({ ...row, kind: 'unsent' });
  if (row.held > 0) out.push({ ...row, kind: 'held' });
  if (row.late > 0) out.push({ ...row, kind: 'late' });
  return out;
}

/**
 * Per customer, meter and billing period overlapping [from, to): the outbox,
 * Stripe's meter summary and the invoice line quantity must agree
 * (docs/billing.md, "Reconciliation"). `meterIds` maps Stripe event names to
 * meter ids. Periods come from the invoices' metered lines, so a period
 * without an invoice line (no subscription) shows in the daily comparison's
 * `held` column instead.
 */
export async function reconcileInvoices(
  deps: InvoiceReconcileDeps,
  opts: { from: Date; to: Date; meterIds: ReadonlyMap<string, string> },
): Promise<{ rows: InvoiceRow[]; differences: InvoiceDifference[] }> {
  const eventNameOf = new Map([...opts.meterIds].map(([name, id]) => [id, name]));
  const [fromS, toS] = [opts.from.getTime() / 1000, opts.to.getTime() / 1000];
  const rows: InvoiceRow[] = [];
  for (const userId of await readUsersWithUsage(deps.prisma, opts.from, opts.to)) {
    const customer = await findCustomerByUserId(deps.prisma, userId);
    if (!customer) continue;
    const items = await findMeteredItems(deps.prisma, userId);
    const meterOfPrice = new Map(items.map((i) => [i.priceId, i.meterId]));
    for (const subscription of new Set(items.map((i) => i.subscriptionId))) {
      for (const invoice of await invoicesOf(deps.stripe, customer.stripeCustomerId, subscription)) {
        for (const line of invoice.lines) {
          const meterId = meterOfPrice.get(line.price);
          const eventName = meterId && eventNameOf.get(meterId);
          if (!meterId || !eventName || line.end <= fromS || line.start >= toS) continue;
          const totals = await readPeriodTotals(
            deps.prisma,
            userId,
            eventName,
            new Date(line.start * 1000),
            new Date(line.end * 1000),
          );
          rows.push({
            user_id: userId,
            customer: customer.stripeCustomerId,
            event_name: eventName,
            subscription_id: subscription,
            period_start: iso(line.start),
            period_end: iso(line.end),
            invoice: invoice.invoice,
            invoice_status: invoice.status,
            outbox: totals.sent,
            unsent: totals.pending + totals.failed,
            held: totals.unbillable + totals.review,
            late: totals.late,
            stripe: await summaryOf(deps.stripe, meterId, customer.stripeCustomerId, line.start, line.end),
            invoice_quantity: line.quantity,
          });
        }
      }
    }
  }
  return { rows, differences: rows.flatMap(differencesOf) };
}
