import type { PrismaClient } from '../generated/prisma/client';

export type EntitlementRow = { lookupKey: string; featureId: string };

/**
 * Replaces the user's active entitlements with a list read from Stripe at
 * `syncedAt`, unless a newer read was stored already (the conditional upsert
 * of entitlement_syncs takes the row lock, so concurrent writers serialise).
 */
export async function replaceEntitlements(
  prisma: PrismaClient,
  write: { userId: string; stripeCustomerId: string; syncedAt: Date; entitlements: EntitlementRow[] },
): Promise<boolean> {
  const { userId, stripeCustomerId, syncedAt } = write;
  return prisma.$transaction(async (tx) => {
    const written = await tx.$executeRaw`
      INSERT INTO "entitlement_syncs" ("user_id", "synced_at") VALUES (${userId}, ${syncedAt}::timestamptz)
      ON CONFLICT ("user_id") DO UPDATE SET "synced_at" = EXCLUDED."synced_at"
      WHERE "entitlement_syncs"."synced_at" <= EXCLUDED."synced_at"`;
    if (written === 0) return false;
    await tx.entitlement.deleteMany({ where: { userId } });
    const unique = new Map(write.entitlements.map((e) => [e.lookupKey, e]));
    await tx.entitlement.createMany({
      data: [...unique.values()].map((e) => ({ userId, stripeCustomerId, syncedAt, ...e })),
    });
    return true;
  });
}

/** The user's active entitlements, by lookup key; `synced` is false when they were never read from Stripe. */
export async function findEntitlements(
  prisma: PrismaClient,
  userId: string,
): Promise<{ synced: boolean; entitlements: EntitlementRow[] }> {
  const [sync, entitlements] = await Promise.all([
    prisma.entitlementSync.findUnique({ where: { userId }, select: { syncedAt: true } }),
    prisma.entitlement.findMany({
      where: { userId },
      orderBy: { lookupKey: 'asc' },
      select: { lookupKey: true, featureId: true },
    }),
  ]);
  return { synced: sync !== null, entitlements };
}
