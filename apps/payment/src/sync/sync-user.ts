import type { SyncResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import { type CustomerRecord, clearCheckoutPending, findCustomerByUserId } from '../customers/repo';
import { findEntitlements } from '../entitlements/repo';
import { syncEntitlements } from '../entitlements/sync';
import type { PrismaClient } from '../generated/prisma/client';
import { syncCustomerPurchases } from '../purchases/sync';
import { formatTimestamp, toSpecStatus } from '../subscriptions/status';
import { type SyncDeps, syncCustomerSubscriptions } from '../subscriptions/sync';

/**
 * Reads everything the service keeps about one customer from Stripe and
 * stores it: subscriptions, active entitlements and completed one-time
 * purchases. Used by `POST /api/v1/sync/{user_id}` (the success page) and the
 * reconciliation job's backfill. A pending checkout mark is cleared: its
 * outcome is now in the database.
 */
export async function syncCustomer(deps: SyncDeps, customer: CustomerRecord): Promise<{ purchases: number }> {
  const startedAt = deps.now();
  await syncCustomerSubscriptions(deps, customer);
  await syncEntitlements(deps, customer);
  const purchases = await syncCustomerPurchases(deps, customer.stripeCustomerId);
  await clearCheckoutPending(deps.prisma, customer.userId, startedAt);
  return { purchases };
}

async function storedSubscriptions(prisma: PrismaClient, userId: string) {
  const rows = await prisma.subscription.findMany({
    where: { userId },
    orderBy: { stripeCreatedAt: 'desc' },
    select: { id: true, status: true, items: { select: { productId: true } } },
  });
  return rows.map((s) => ({
    subscription_id: s.id,
    status: toSpecStatus(s.status),
    product_ids: [...new Set(s.items.map((i) => i.productId))],
  }));
}

/** `POST /api/v1/sync/{user_id}`: 404 `customer not found` for a user who never checked out. */
export async function syncUser(deps: SyncDeps, userId: string): Promise<SyncResponse> {
  const customer = await findCustomerByUserId(deps.prisma, userId);
  if (!customer || customer.deletedAt) throw new AppError('customer_not_found');
  const syncedAt = deps.now();
  const { purchases } = await syncCustomer(deps, customer);
  const entitlements = await findEntitlements(deps.prisma, userId);
  return {
    user_id: userId,
    synced_at: formatTimestamp(syncedAt),
    subscriptions: await storedSubscriptions(deps.prisma, userId),
    entitlements: entitlements.entitlements.map((e) => e.lookupKey),
    purchases,
  };
}
