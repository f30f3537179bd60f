import type { CustomerRecord } from '../customers/repo';
import type { PrismaClient } from '../generated/prisma/client';
import type { SubscriptionSnapshot } from './snapshot';
import type { StoredSubscription } from './status';

/** A snapshot to store, with when it was read from Stripe and the event that caused the read. */
export type SnapshotWrite = {
  userId: string;
  snapshot: SubscriptionSnapshot;
  /** When the Stripe read started; a write with an older read than the stored one is dropped. */
  syncedAt: Date;
  /** `created` of the webhook event behind this read, if any. */
  eventAt?: Date;
};

/**
 * Upserts a subscription and replaces its items, unless the stored snapshot
 * comes from a newer Stripe read (`synced_at`), so a slow request never
 * overwrites what a faster, later one stored. The conditional upsert takes the
 * row lock, so two concurrent writers serialise on it. Returns whether it wrote.
 */
export async function upsertSubscriptionSnapshot(
  prisma: PrismaClient,
  write: SnapshotWrite,
): Promise<boolean> {
  const { snapshot: s, userId, syncedAt } = write;
  const eventAt = write.eventAt ?? null;
  return prisma.$transaction(async (tx) => {
    const written = await tx.$executeRaw`
      INSERT INTO "subscriptions"
        ("id", "user_id", "stripe_customer_id", "status", "current_period_end", "stripe_created_at", "last_event_at", "synced_at")
      VALUES
        (${s.id}, ${userId}, ${s.stripeCustomerId}, ${s.status}, ${s.currentPeriodEnd}::timestamptz,
         ${s.stripeCreatedAt}::timestamptz, ${eventAt}::timestamptz, ${syncedAt}::timestamptz)
      ON CONFLICT ("id") DO UPDATE SET
        "user_id" = EXCLUDED."user_id",
        "stripe_customer_id" = EXCLUDED."stripe_customer_id",
        "status" = EXCLUDED."status",
        "current_period_end" = EXCLUDED."current_period_end",
        "stripe_created_at" = EXCLUDED."stripe_created_at",
        "last_event_at" = GREATEST("subscriptions"."last_event_at", EXCLUDED."last_event_at"),
        "synced_at" = EXCLUDED."synced_at"
      WHERE "subscriptions"."synced_at" <= EXCLUDED."synced_at"`;
    if (written === 0) return false;
    await tx.subscriptionItem.deleteMany({ where: { subscriptionId: s.id } });
    await tx.subscriptionItem.createMany({
      data: s.items.map((item) => ({
        id: item.id,
        subscriptionId: s.id,
        productId: item.productId,
        priceId: item.priceId,
        currentPeriodEnd: item.currentPeriodEnd,
        currentPeriodStart: item.currentPeriodStart ?? null,
        meterId: item.meterId ?? null,
        currency: item.currency ?? null,
      })),
    });
    // Usage held for want of a billable subscription item gets another look now (docs/billing.md).
    await tx.$executeRaw`
      UPDATE usage_events SET status = 'pending', hold_reason = NULL, next_attempt_at = now()
      WHERE user_id = ${userId} AND status = 'unbillable'`;
    return true;
  });
}

/** `created` of the newest event applied to a subscription; null when none was. */
export async function findLastEventAt(prisma: PrismaClient, subscriptionId: string): Promise<Date | null> {
  const row = await prisma.subscription.findUnique({
    where: { id: subscriptionId },
    select: { lastEventAt: true },
  });
  return row?.lastEventAt ?? null;
}

/** The user's stored subscriptions that have an item of the product, with those items. */
export function findSubscriptionsForProduct(
  prisma: PrismaClient,
  userId: string,
  productId: string,
): Promise<StoredSubscription[]> {
  return prisma.subscription.findMany({
    where: { userId, items: { some: { productId } } },
    select: {
      id: true,
      status: true,
      currentPeriodEnd: true,
      stripeCreatedAt: true,
      syncedAt: true,
      items: { where: { productId }, select: { productId: true, currentPeriodEnd: true } },
    },
  });
}

type StatusRow = {
  ord: number;
  user_id: string;
  stripe_customer_id: string;
  email: string;
  subscriptions_synced_at: Date | string | null;
  checkout_pending_since: Date | string | null;
  sub_id: string | null;
  status: string | null;
  sub_period_end: Date | string | null;
  stripe_created_at: Date | string | null;
  synced_at: Date | string | null;
  product_id: string | null;
  item_period_end: Date | string | null;
};

const toDate = (v: Date | string | null): Date | null =>
  v === null ? null : v instanceof Date ? v : new Date(v);

/** One status read: a user and a product. */
export type StatusKey = { userId: string; productId: string };

/** The customer row and their stored subscriptions that have an item of the product, with those items. */
export type CustomerWithSubscriptions = { customer: CustomerRecord; subscriptions: StoredSubscription[] };

/**
 * Status reads in one statement and one round trip, however many: for each
 * key (in order), the customer row and, joined, their subscriptions that have
 * an item of the key's product with those items; null where the user has no
 * customer row. One key is the single read; the status reader sends the reads
 * that arrive together as one batch (get-status.ts). Before: two Prisma reads
 * plus Prisma's separate query for the nested items, three round trips per
 * read (bench finding 5).
 */
export async function findCustomersWithSubscriptionsForProducts(
  prisma: PrismaClient,
  keys: readonly StatusKey[],
): Promise<Array<CustomerWithSubscriptions | null>> {
  const userIds = keys.map((k) => k.userId);
  const productIds = keys.map((k) => k.productId);
  const rows = await prisma.$queryRaw<StatusRow[]>`
    SELECT k.ord::int AS ord, c.user_id, c.stripe_customer_id, c.email, c.subscriptions_synced_at,
           c.checkout_pending_since,
           x.sub_id, x.status, x.sub_period_end, x.stripe_created_at, x.synced_at,
           x.product_id, x.item_period_end
    FROM unnest(${userIds}::text[], ${productIds}::text[]) WITH ORDINALITY AS k(user_id, product_id, ord)
    JOIN customers c ON c.user_id = k.user_id AND c.deleted_at IS NULL
    LEFT JOIN LATERAL (
      SELECT s.id AS sub_id, s.status, s.current_period_end AS sub_period_end,
             s.stripe_created_at, s.synced_at,
             i.product_id, i.current_period_end AS item_period_end
      FROM subscriptions s
      JOIN subscription_items i ON i.subscription_id = s.id AND i.product_id = k.product_id
      WHERE s.user_id = c.user_id
    ) x ON true`;
  const found: Array<CustomerWithSubscriptions | null> = keys.map(() => null);
  // A subscription's rows (one per item of the product), per key: `${index} ${sub_id}`.
  const subscriptions = new Map<string, StoredSubscription>();
  for (const row of rows) {
    // ord is 1-based, in the order of `keys`.
    const index = Number(row.ord) - 1;
    let entry = found[index];
    if (entry === undefined) continue;
    if (entry === null) {
      entry = {
        customer: {
          userId: row.user_id,
          stripeCustomerId: row.stripe_customer_id,
          email: row.email,
          subscriptionsSyncedAt: toDate(row.subscriptions_synced_at),
          checkoutPendingSince: toDate(row.checkout_pending_since),
          deletedAt: null,
        },
        subscriptions: [],
      };
      found[index] = entry;
    }
    if (row.sub_id === null || row.product_id === null) continue;
    const subKey = `${index} ${row.sub_id}`;
    let sub = subscriptions.get(subKey);
    if (!sub) {
      sub = {
        id: row.sub_id,
        status: row.status ?? '',
        currentPeriodEnd: toDate(row.sub_period_end),
        stripeCreatedAt: toDate(row.stripe_created_at) ?? new Date(0),
        syncedAt: toDate(row.synced_at) ?? new Date(0),
        items: [],
      };
      subscriptions.set(subKey, sub);
      entry.subscriptions.push(sub);
    }
    sub.items.push({ productId: row.product_id, currentPeriodEnd: toDate(row.item_period_end) });
  }
  return found;
}

/** Stripe statuses under which a subscription grants access (and a second one would bill twice). */
export const ENTITLING_STATUSES = ['active', 'trialing', 'past_due'] as const;

/** The user's entitling subscription with an item of one of the products, if any. */
export async function findEntitlingSubscription(
  prisma: PrismaClient,
  userId: string,
  productIds: readonly string[],
): Promise<{ subscriptionId: string; productId: string; status: string } | undefined> {
  const item = await prisma.subscriptionItem.findFirst({
    where: {
      productId: { in: [...productIds] },
      subscription: { userId, status: { in: [...ENTITLING_STATUSES] } },
    },
    select: { productId: true, subscription: { select: { id: true, status: true } } },
  });
  return item
    ? { subscriptionId: item.subscription.id, productId: item.productId, status: item.subscription.status }
    : undefined;
}
