import type { PrismaClient } from '../generated/prisma/client';

/** The user -> Stripe customer mapping as the service uses it. */
export type CustomerRecord = {
  userId: string;
  stripeCustomerId: string;
  email: string;
  /** When every subscription of this customer was last listed from Stripe; null = never. */
  subscriptionsSyncedAt: Date | null;
  /** When a subscription checkout was created whose outcome is not yet known; null = none. */
  checkoutPendingSince: Date | null;
  /** When Stripe reported the customer deleted; such a mapping is replaced at the next checkout. */
  deletedAt: Date | null;
};

const SELECT = {
  userId: true,
  stripeCustomerId: true,
  email: true,
  subscriptionsSyncedAt: true,
  checkoutPendingSince: true,
  deletedAt: true,
} as const;

export function findCustomerByUserId(prisma: PrismaClient, userId: string): Promise<CustomerRecord | null> {
  return prisma.customer.findUnique({ where: { userId }, select: SELECT });
}

/** The live mapping of a Stripe customer; a customer Stripe reported deleted has none. */
export function findCustomerByStripeId(
  prisma: PrismaClient,
  stripeCustomerId: string,
): Promise<CustomerRecord | null> {
  return prisma.customer.findFirst({ where: { stripeCustomerId, deletedAt: null }, select: SELECT });
}

/** A page of live customers after `afterUserId`, in user id order (the reconciliation's backfill cursor). */
export function listCustomersAfter(
  prisma: PrismaClient,
  afterUserId: string,
  take: number,
): Promise<CustomerRecord[]> {
  return prisma.customer.findMany({
    where: { userId: { gt: afterUserId }, deletedAt: null },
    orderBy: { userId: 'asc' },
    take,
    select: SELECT,
  });
}

/**
 * Forgets a Stripe customer that Stripe deleted (event or "No such customer"):
 * the mapping is kept, marked deleted, so the next checkout replaces it under
 * the usual race safety; its subscriptions and entitlements are dropped, since
 * Stripe ended them with the customer. Purchases stay as history. Returns the
 * user whose mapping it was, if any.
 */
export async function markCustomerDeleted(
  prisma: PrismaClient,
  stripeCustomerId: string,
  at: Date,
): Promise<string | undefined> {
  return prisma.$transaction(async (tx) => {
    const row = await tx.customer.findUnique({ where: { stripeCustomerId }, select: { userId: true } });
    if (!row) return undefined;
    await tx.customer.updateMany({
      where: { stripeCustomerId, deletedAt: null },
      data: { deletedAt: at, subscriptionsSyncedAt: null, checkoutPendingSince: null },
    });
    await tx.subscription.deleteMany({ where: { stripeCustomerId } });
    await tx.entitlement.deleteMany({ where: { userId: row.userId } });
    await tx.entitlementSync.deleteMany({ where: { userId: row.userId } });
    return row.userId;
  });
}

/**
 * Points a deleted mapping at the user's new Stripe customer, unless another
 * request did so first (the update is conditional on the old id); the caller re-reads.
 */
export async function replaceDeletedCustomer(
  prisma: PrismaClient,
  input: { userId: string; oldStripeCustomerId: string; stripeCustomerId: string; email: string },
): Promise<void> {
  await prisma.customer.updateMany({
    where: { userId: input.userId, stripeCustomerId: input.oldStripeCustomerId, deletedAt: { not: null } },
    data: {
      stripeCustomerId: input.stripeCustomerId,
      email: input.email,
      deletedAt: null,
      subscriptionsSyncedAt: null,
      checkoutPendingSince: null,
    },
  });
}

/** A subscription checkout was created: until its outcome is known, `none` is not answered from the database. */
export async function markCheckoutPending(prisma: PrismaClient, userId: string, at: Date): Promise<void> {
  await prisma.customer.updateMany({ where: { userId }, data: { checkoutPendingSince: at } });
}

/** The outcome of the checkouts created up to `upTo` is known (a later checkout keeps its mark). */
export async function clearCheckoutPending(prisma: PrismaClient, userId: string, upTo: Date): Promise<void> {
  await prisma.customer.updateMany({
    where: { userId, checkoutPendingSince: { lte: upTo } },
    data: { checkoutPendingSince: null },
  });
}

/**
 * Inserts the mapping unless the user already has one (`ON CONFLICT DO NOTHING`),
 * so of two concurrent first checkouts exactly one row wins; the caller re-reads.
 */
export async function insertCustomerIfAbsent(
  prisma: PrismaClient,
  customer: { userId: string; stripeCustomerId: string; email: string },
): Promise<void> {
  await prisma.customer.createMany({ data: [customer], skipDuplicates: true });
}

export async function updateCustomerEmail(
  prisma: PrismaClient,
  userId: string,
  email: string,
): Promise<void> {
  await prisma.customer.update({ where: { userId }, data: { email } });
}

/** Records a full listing of the customer's subscriptions read at `at`; never moves the mark back. */
export async function markSubscriptionsSynced(prisma: PrismaClient, userId: string, at: Date): Promise<void> {
  await prisma.customer.updateMany({
    where: { userId, OR: [{ subscriptionsSyncedAt: null }, { subscriptionsSyncedAt: { lt: at } }] },
    data: { subscriptionsSyncedAt: at },
  });
}
