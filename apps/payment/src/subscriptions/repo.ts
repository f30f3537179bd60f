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
      })),
    });
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
