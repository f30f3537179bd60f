import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import { type CustomerRecord, listCustomersAfter, markCustomerDeleted } from '../customers/repo';
import type { PrismaClient } from '../generated/prisma/client';
import { callStripe, isResourceMissing } from '../stripe-errors';
import { syncCustomer } from '../sync/sync-user';
import { HANDLED_EVENT_TYPES, handleStripeEvent } from '../webhooks/handle-event';
import { pruneEvents } from '../webhooks/repo';
import { readCursor, writeCursor } from './repo';

export type ReconcileDeps = {
  prisma: PrismaClient;
  stripe: Stripe;
  logger: Logger;
  now: () => Date;
  env: { PAYMENT_WEBHOOK_EVENT_RETENTION_DAYS: number; PAYMENT_RECONCILE_BACKFILL_BATCH: number };
};

export type ReconcileReport = {
  /** Undelivered events found, applied (including ones already applied: duplicates) and failed. */
  events: { listed: number; applied: number; failed: number };
  /** Customers re-read from Stripe, found deleted, failed; `complete` when the backfill pass reached the last customer. */
  customers: { synced: number; deleted: number; failed: number; complete: boolean };
  /** Processed-event ids dropped after the retention window. */
  pruned: number;
};

/** Stripe keeps events for 30 days; a cursor never reaches further back. */
const EVENT_HISTORY_SECONDS = 30 * 86_400;
/** Events are re-listed from this far before the last run, so one created during that run is not missed. */
const EVENT_OVERLAP_SECONDS = 600;
/** Stripe's events list takes at most 20 types. */
const MAX_TYPES = 20;
/** Most undelivered events one run replays. */
const MAX_EVENTS_PER_RUN = 10_000;

const EVENTS_CURSOR = 'events.created';
const CUSTOMERS_CURSOR = 'backfill.user_id';

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/**
 * Replays the events whose webhook delivery failed (`delivery_success=false`)
 * since the last run, oldest first, through the webhook handler (which drops
 * the ones already applied by id). The cursor is the run's start less an
 * overlap; it advances only when every event was applied, so a failed one is
 * tried again next run.
 */
async function replayUndelivered(deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  const startedAt = Math.floor(deps.now().getTime() / 1000);
  const stored = Number(await readCursor(deps.prisma, EVENTS_CURSOR));
  const since = Math.max(Number.isFinite(stored) ? stored : 0, startedAt - EVENT_HISTORY_SECONDS);
  const events: Stripe.Event[] = [];
  for (const types of chunks(HANDLED_EVENT_TYPES, MAX_TYPES)) {
    const page = await callStripe(() =>
      deps.stripe.events
        .list({ delivery_success: false, created: { gte: since }, types: [...types], limit: 100 })
        .autoPagingToArray({ limit: MAX_EVENTS_PER_RUN }),
    );
    events.push(...page);
  }
  events.sort((a, b) => a.created - b.created);
  report.events.listed = events.length;
  for (const event of events) {
    try {
      await handleStripeEvent(deps, event);
      report.events.applied++;
    } catch (err) {
      report.events.failed++;
      deps.logger.warn({ err, eventId: event.id, type: event.type }, 'replaying an undelivered event failed');
    }
  }
  if (report.events.failed === 0) {
    await writeCursor(deps.prisma, EVENTS_CURSOR, String(startedAt - EVENT_OVERLAP_SECONDS));
  }
}

/** Re-reads one customer; a customer Stripe deleted is forgotten. Returns what became of it. */
async function backfillCustomer(
  deps: ReconcileDeps,
  customer: CustomerRecord,
): Promise<'synced' | 'deleted'> {
  try {
    const found = await deps.stripe.customers.retrieve(customer.stripeCustomerId);
    if ((found as Stripe.DeletedCustomer).deleted) {
      await markCustomerDeleted(deps.prisma, customer.stripeCustomerId, deps.now());
      return 'deleted';
    }
  } catch (err) {
    if (!isResourceMissing(err)) throw err;
    await markCustomerDeleted(deps.prisma, customer.stripeCustomerId, deps.now());
    return 'deleted';
  }
  await syncCustomer(deps, customer);
  return 'synced';
}

/**
 * Re-reads up to PAYMENT_RECONCILE_BACKFILL_BATCH customers from Stripe
 * (customer, subscriptions, entitlements, completed one-time purchases),
 * continuing after the user id where the previous run stopped; after the last
 * customer the cursor starts over.
 */
async function backfill(deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  let after = (await readCursor(deps.prisma, CUSTOMERS_CURSOR)) ?? '';
  let left = deps.env.PAYMENT_RECONCILE_BACKFILL_BATCH;
  while (left > 0) {
    const page = await listCustomersAfter(deps.prisma, after, Math.min(left, 100));
    for (const customer of page) {
      try {
        const outcome = await backfillCustomer(deps, customer);
        if (outcome === 'deleted') report.customers.deleted++;
        else report.customers.synced++;
      } catch (err) {
        report.customers.failed++;
        deps.logger.warn({ err, userId: customer.userId }, 'backfilling a customer failed');
      }
      after = customer.userId;
    }
    left -= page.length;
    if (page.length < Math.min(left + page.length, 100)) {
      report.customers.complete = true;
      after = '';
      break;
    }
  }
  await writeCursor(deps.prisma, CUSTOMERS_CURSOR, after);
}

/**
 * One reconciliation run (`npm run reconcile -w @platform/payment`, the
 * `payment-reconcile` CronJob): replays undelivered events, backfills a batch
 * of customers, prunes processed-event ids past the retention window. Safe to
 * run while the service runs and twice at once: every write is the same
 * guarded write the webhooks make.
 */
export async function runReconciliation(deps: ReconcileDeps): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    events: { listed: 0, applied: 0, failed: 0 },
    customers: { synced: 0, deleted: 0, failed: 0, complete: false },
    pruned: 0,
  };
  await replayUndelivered(deps, report);
  await backfill(deps, report);
  const cutoff = new Date(deps.now().getTime() - deps.env.PAYMENT_WEBHOOK_EVENT_RETENTION_DAYS * 86_400_000);
  report.pruned = await pruneEvents(deps.prisma, cutoff);
  return report;
}
