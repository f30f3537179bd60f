import type { PrismaClient } from '../generated/prisma/client';

/** The user -> Stripe customer mapping as the service uses it. */
export type CustomerRecord = {
  userId: string;
  stripeCustomerId: string;
  email: string;
  /** When every subscription of this customer was last listed from Stripe; null = never. */
  subscriptionsSyncedAt: Date | null;
};

const SELECT = { userId: true, stripeCustomerId: true, email: true, subscriptionsSyncedAt: true } as const;

export function findCustomerByUserId(prisma: PrismaClient, userId: string): Promise<CustomerRecord | null> {
  return prisma.customer.findUnique({ where: { userId }, select: SELECT });
}

export function findCustomerByStripeId(
  prisma: PrismaClient,
  stripeCustomerId: string,
): Promise<CustomerRecord | null> {
  return prisma.customer.findUnique({ where: { stripeCustomerId }, select: SELECT });
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
