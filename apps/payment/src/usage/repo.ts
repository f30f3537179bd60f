import type { PrismaClient } from '../generated/prisma/client';
import type { BillingItem } from './billing-home';

/** An event as the outbox stores it. */
export type OutboxEvent = {
  id: string;
  userId: string;
  meter: string;
  eventName: string;
  value: number;
  occurredAt: Date;
};

/** A row a sender holds under its lease. */
export type ClaimedEvent = OutboxEvent & {
  attempts: number;
  /** When a sender first called Stripe with it; null before that. */
  firstAttemptAt: Date | null;
};

/**
 * Inserts the events whose id is new, in one statement (`ON CONFLICT DO
 * NOTHING`, so concurrent sends of one id insert it once), and returns the
 * ids this call inserted. The statement commits before it returns. An event
 * stamped ahead of `now` (payment's clock; a caller's clock running fast) is not due before
 * Stripe takes its timestamp (at most 5 minutes ahead; 4 keeps a margin).
 */
export async function insertNewEvents(
  prisma: PrismaClient,
  events: OutboxEvent[],
  now: Date,
): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const rows = await prisma.$queryRaw<Array<{ id: string }>>`
    INSERT INTO usage_events (id, user_id, meter, event_name, value, occurred_at, next_attempt_at)
    SELECT e.*, now() + GREATEST(interval '0', e.occurred_at - make_interval(mins => 4) - ${now}::timestamptz)
    FROM unnest(
      ${events.map((e) => e.id)}::text[], ${events.map((e) => e.userId)}::text[],
      ${events.map((e) => e.meter)}::text[], ${events.map((e) => e.eventName)}::text[],
      ${events.map((e) => e.value)}::int[], ${events.map((e) => e.occurredAt.toISOString())}::timestamptz[])
      AS e(id, user_id, meter, event_name, value, occurred_at)
    ON CONFLICT (id) DO NOTHING
    RETURNING id`;
  return new Set(rows.map((row) => row.id));
}

export function findEvents(prisma: PrismaClient, ids: string[]): Promise<OutboxEvent[]> {
  return prisma.usageEvent.findMany({
    where: { id: { in: ids } },
    select: { id: true, userId: true, meter: true, eventName: true, value: true, occurredAt: true },
  });
}

/**
 * Claims up to `limit` due rows for `token` for `leaseSeconds`. `SKIP LOCKED`
 * keeps concurrent claimers off each other's rows; the lease (database clock)
 * keeps them off rows another sender holds between statements, and returns a
 * crashed sender's rows once it runs out.
 */
export function claimDueEvents(
  prisma: PrismaClient,
  opts: { limit: number; leaseSeconds: number; token: string },
): Promise<ClaimedEvent[]> {
  return prisma.$queryRaw<ClaimedEvent[]>`
    WITH due AS (
      SELECT id FROM usage_events
      WHERE status = 'pending' AND next_attempt_at <= now()
        AND (claimed_until IS NULL OR claimed_until < now())
      ORDER BY next_attempt_at, id
      LIMIT ${opts.limit}
      FOR UPDATE SKIP LOCKED)
    UPDATE usage_events u
    SET claimed_until = now() + make_interval(secs => ${opts.leaseSeconds}), claim_token = ${opts.token}
    FROM due WHERE u.id = due.id
    RETURNING u.id, u.user_id AS "userId", u.meter, u.event_name AS "eventName", u.value,
      u.occurred_at AS "occurredAt", u.attempts, u.first_attempt_at AS "firstAttemptAt"`;
}

/** Notes the first call to Stripe for these rows (kept on later attempts): from then on they may be there. */
export async function markAttempted(prisma: PrismaClient, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await prisma.$executeRaw`
    UPDATE usage_events SET first_attempt_at = ${now}
    WHERE id = ANY(${ids}::text[]) AND first_attempt_at IS NULL`;
}

/** Stripe acknowledged the event: final, whoever holds the row now. */
export async function markSent(prisma: PrismaClient, id: string, stripeCustomerId: string): Promise<void> {
  await prisma.$executeRaw`
    UPDATE usage_events
    SET status = 'sent', sent_at = now(), stripe_customer_id = ${stripeCustomerId}, attempts = attempts + 1,
      claimed_until = NULL, claim_token = NULL, last_error = NULL
    WHERE id = ${id} AND status = 'pending'`;
}

/** The user's stored subscription items with a price on the meter, with their subscription. */
export function findBillingItems(
  prisma: PrismaClient,
  userId: string,
  meterId: string,
): Promise<BillingItem[]> {
  return prisma.$queryRaw<BillingItem[]>`
    SELECT s.id AS "subscriptionId", i.id AS "itemId", i.price_id AS "priceId", s.status,
      s.stripe_customer_id AS "stripeCustomerId", i.currency, i.current_period_start AS "periodStart",
      i.current_period_end AS "periodEnd", s.stripe_created_at AS "subscriptionCreatedAt"
    FROM subscription_items i JOIN subscriptions s ON s.id = i.subscription_id
    WHERE s.user_id = ${userId} AND i.meter_id = ${meterId}`;
}

/** States of a row kept out of the sender until someone (a subscription change, an operator) moves it. */
export type HeldStatus = 'unbillable' | 'late' | 'review';

/** Holds claimed rows as `status` with the reason; never sent while held. */
export async function markHeld(
  prisma: PrismaClient,
  opts: { ids: string[]; token: string; status: HeldStatus; reason: string },
): Promise<void> {
  if (opts.ids.length === 0) return;
  await prisma.$executeRaw`
    UPDATE usage_events
    SET status = ${opts.status}, hold_reason = ${opts.reason.slice(0, 500)}, claimed_until = NULL,
      claim_token = NULL
    WHERE id = ANY(${opts.ids}::text[]) AND claim_token = ${opts.token} AND status = 'pending'`;
}

/** Stripe refused the event for good (400): kept as `failed` for inspection and replay. */
export async function markFailed(
  prisma: PrismaClient,
  id: string,
  token: string,
  error: string,
): Promise<void> {
  await prisma.$executeRaw`
    UPDATE usage_events
    SET status = 'failed', attempts = attempts + 1, claimed_until = NULL, claim_token = NULL,
      last_error = ${error.slice(0, 1000)}
    WHERE id = ${id} AND claim_token = ${token} AND status = 'pending'`;
}

/**
 * Gives rows back to the outbox, due again in `delayMs`. `attempted` counts an
 * attempt and records the error (the row's own failure); rows that were only
 * held back behind another row's failure are not charged one.
 */
export async function releaseEvents(
  prisma: PrismaClient,
  opts: { ids: string[]; token: string; delayMs: number; attempted: boolean; error?: string },
): Promise<void> {
  if (opts.ids.length === 0) return;
  const increment = opts.attempted ? 1 : 0;
  await prisma.$executeRaw`
    UPDATE usage_events
    SET next_attempt_at = now() + make_interval(secs => ${opts.delayMs / 1000}),
      claimed_until = NULL, claim_token = NULL, attempts = attempts + ${increment},
      last_error = COALESCE(${opts.error?.slice(0, 1000) ?? null}, last_error)
    WHERE id = ANY(${opts.ids}::text[]) AND claim_token = ${opts.token} AND status = 'pending'`;
}

/** What /metrics and readiness show of the outbox. */
export type OutboxStats = {
  pending: number;
  failed: number;
  oldestPendingAgeSeconds: number;
  /** Rows held (unbillable, late, review): count and value. */
  held: Record<HeldStatus, { count: number; value: number }>;
};

export async function readOutboxStats(prisma: PrismaClient): Promise<OutboxStats> {
  const [pending] = await prisma.$queryRaw<Array<{ count: bigint; age: number | null }>>`
    SELECT count(*) AS count, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age
    FROM usage_events WHERE status = 'pending'`;
  const others = await prisma.$queryRaw<Array<{ status: string; count: bigint; value: bigint | null }>>`
    SELECT status, count(*) AS count, sum(value) AS value FROM usage_events
    WHERE status IN ('failed', 'unbillable', 'late', 'review') GROUP BY status`;
  const of = (status: string) => {
    const row = others.find((r) => r.status === status);
    return { count: Number(row?.count ?? 0), value: Number(row?.value ?? 0) };
  };
  return {
    pending: Number(pending?.count ?? 0),
    failed: of('failed').count,
    oldestPendingAgeSeconds: Math.max(0, pending?.age ?? 0),
    held: { unbillable: of('unbillable'), late: of('late'), review: of('review') },
  };
}

/** Outbox totals per user, event name and UTC day, by status, for reconciliation. */
export type DailyTotal = { userId: string; eventName: string; day: string; status: string; value: number };

export async function readDailyTotals(prisma: PrismaClient, from: Date, to: Date): Promise<DailyTotal[]> {
  const rows = await prisma.$queryRaw<Array<Omit<DailyTotal, 'value'> & { value: bigint }>>`
    SELECT user_id AS "userId", event_name AS "eventName",
      to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, status, sum(value) AS value
    FROM usage_events WHERE occurred_at >= ${from} AND occurred_at < ${to}
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`;
  return rows.map((row) => ({ ...row, value: Number(row.value) }));
}

type MeterErrorReportRow = {
  id: string;
  meterId: string | null;
  summary: string;
  errorCount: number;
  errorTypes: object[];
  validationStart: Date | null;
  validationEnd: Date | null;
  stripeCreatedAt: Date;
};

/** Stores a meter error report unless its event id is known; true when it was new. */
export async function insertMeterErrorReport(
  prisma: PrismaClient,
  report: MeterErrorReportRow,
): Promise<boolean> {
  const { count } = await prisma.meterErrorReport.createMany({ data: [report], skipDuplicates: true });
  return count > 0;
}

export function findMeterErrorReports(prisma: PrismaClient, limit: number) {
  return prisma.meterErrorReport.findMany({ orderBy: { receivedAt: 'desc' }, take: limit });
}

/** Users with usage events in [from, to). */
export async function readUsersWithUsage(prisma: PrismaClient, from: Date, to: Date): Promise<string[]> {
  const rows = await prisma.$queryRaw<Array<{ userId: string }>>`
    SELECT DISTINCT user_id AS "userId" FROM usage_events WHERE occurred_at >= ${from} AND occurred_at < ${to}
    ORDER BY 1`;
  return rows.map((r) => r.userId);
}

/** The user's stored subscription items with a price on a meter. */
export function findMeteredItems(
  prisma: PrismaClient,
  userId: string,
): Promise<Array<{ subscriptionId: string; priceId: string; meterId: string; currency: string | null }>> {
  return prisma.$queryRaw`
    SELECT i.subscription_id AS "subscriptionId", i.price_id AS "priceId", i.meter_id AS "meterId", i.currency
    FROM subscription_items i JOIN subscriptions s ON s.id = i.subscription_id
    WHERE s.user_id = ${userId} AND i.meter_id IS NOT NULL`;
}

/** The outbox's value of one user and event name in [from, to), by status. */
export async function readPeriodTotals(
  prisma: PrismaClient,
  userId: string,
  eventName: string,
  from: Date,
  to: Date,
): Promise<
  Record<'sent' | 'pending' | 'failed' | 'unbillable' | 'late' | 'review' | 'billed_by_hand', number>
> {
  const rows = await prisma.$queryRaw<Array<{ status: string; value: bigint }>>`
    SELECT status, sum(value) AS value FROM usage_events
    WHERE user_id = ${userId} AND event_name = ${eventName} AND occurred_at >= ${from} AND occurred_at < ${to}
    GROUP BY status`;
  const of = (status: string) => Number(rows.find((r) => r.status === status)?.value ?? 0);
  return {
    sent: of('sent'),
    pending: of('pending'),
    failed: of('failed'),
    unbillable: of('unbillable'),
    late: of('late'),
    review: of('review'),
    billed_by_hand: of('billed_by_hand'),
  };
}

/**
 * The outbox's view of one user, event name and minute: the value Stripe
 * acknowledged (sent) and the rows that may be at Stripe without payment
 * knowing (a call was made, no acknowledgement recorded).
 */
export async function readMinuteTotals(
  prisma: PrismaClient,
  opts: { userId: string; eventName: string; from: Date; to: Date },
): Promise<{ sent: number; maybeSent: number; maybeSentIds: string[] }> {
  const rows = await prisma.$queryRaw<
    Array<{ id: string; status: string; value: number; attempted: boolean }>
  >`
    SELECT id, status, value, first_attempt_at IS NOT NULL AS attempted FROM usage_events
    WHERE user_id = ${opts.userId} AND event_name = ${opts.eventName}
      AND occurred_at >= ${opts.from} AND occurred_at < ${opts.to}`;
  const maybe = rows.filter((r) => r.status !== 'sent' && r.status !== 'billed_by_hand' && r.attempted);
  return {
    sent: rows.filter((r) => r.status === 'sent').reduce((sum, r) => sum + r.value, 0),
    maybeSent: maybe.reduce((sum, r) => sum + r.value, 0),
    maybeSentIds: maybe.map((r) => r.id),
  };
}

/** The `late` rows, optionally of one user, in order. */
export function findLateEvents(prisma: PrismaClient, userId: string | undefined): Promise<OutboxEvent[]> {
  return prisma.$queryRaw`
    SELECT id, user_id AS "userId", meter, event_name AS "eventName", value, occurred_at AS "occurredAt"
    FROM usage_events
    WHERE status = 'late' AND (${userId ?? null}::text IS NULL OR user_id = ${userId ?? null})
    ORDER BY user_id, meter, occurred_at`;
}

/** Late rows billed as an invoice item: kept, out of the `late` count. */
export async function markBilledByHand(
  prisma: PrismaClient,
  ids: string[],
  invoiceItemId: string,
): Promise<void> {
  await prisma.$executeRaw`
    UPDATE usage_events SET status = 'billed_by_hand', hold_reason = ${`invoice item ${invoiceItemId}`}
    WHERE id = ANY(${ids}::text[]) AND status = 'late'`;
}
