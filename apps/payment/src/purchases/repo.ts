import type { PrismaClient } from '../generated/prisma/client';

/** How Stripe's checkout reported the payment of a purchase. */
export type PaymentState = 'paid' | 'pending' | 'failed';

/** One line of a purchase as read from the session's line items. */
export type PurchaseLine = { priceId: string; productId: string; quantity: number; amountTotal: number };

export type PurchaseWrite = {
  id: string;
  userId: string;
  stripeCustomerId: string | null;
  paymentIntentId: string | null;
  paymentStatus: PaymentState;
  amountTotal: number;
  currency: string;
  stripeCreatedAt: Date;
  items: PurchaseLine[];
};

/**
 * Stores a payment-mode checkout and replaces its lines. The payment state
 * only moves forward: a purchase already `paid` or `failed` is never set back
 * to `pending` by a late or replayed event.
 */
export async function upsertPurchase(prisma: PrismaClient, p: PurchaseWrite): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.$executeRaw`
      INSERT INTO "purchases"
        ("id", "user_id", "stripe_customer_id", "payment_intent_id", "payment_status", "amount_total",
         "currency", "stripe_created_at", "updated_at")
      VALUES
        (${p.id}, ${p.userId}, ${p.stripeCustomerId}, ${p.paymentIntentId}, ${p.paymentStatus}, ${p.amountTotal},
         ${p.currency}, ${p.stripeCreatedAt}::timestamptz, now())
      ON CONFLICT ("id") DO UPDATE SET
        "stripe_customer_id" = COALESCE(EXCLUDED."stripe_customer_id", "purchases"."stripe_customer_id"),
        "payment_intent_id" = COALESCE(EXCLUDED."payment_intent_id", "purchases"."payment_intent_id"),
        "payment_status" = CASE
          WHEN "purchases"."payment_status" IN ('paid', 'failed') AND EXCLUDED."payment_status" = 'pending'
            THEN "purchases"."payment_status"
          ELSE EXCLUDED."payment_status" END,
        "amount_total" = EXCLUDED."amount_total",
        "currency" = EXCLUDED."currency",
        "updated_at" = now()`;
    await tx.purchaseItem.deleteMany({ where: { purchaseId: p.id } });
    await tx.purchaseItem.createMany({
      data: p.items.map((item, position) => ({ purchaseId: p.id, position, ...item })),
    });
  });
}

export async function hasPurchaseForPaymentIntent(
  prisma: PrismaClient,
  paymentIntentId: string,
): Promise<boolean> {
  const row = await prisma.purchase.findUnique({ where: { paymentIntentId }, select: { id: true } });
  return row !== null;
}

/** Records the refunded total of a purchase's charge; it only grows, so order and replays do not matter. */
export async function applyRefund(
  prisma: PrismaClient,
  paymentIntentId: string,
  amountRefunded: number,
): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "purchases" SET "amount_refunded" = GREATEST("amount_refunded", ${amountRefunded}), "updated_at" = now()
    WHERE "payment_intent_id" = ${paymentIntentId}`;
  return n > 0;
}

/** Records a dispute's status, unless a newer dispute event was applied already. */
export async function applyDispute(
  prisma: PrismaClient,
  paymentIntentId: string,
  status: string,
  eventAt: Date,
): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "purchases" SET "dispute_status" = ${status}, "dispute_event_at" = ${eventAt}::timestamptz,
      "updated_at" = now()
    WHERE "payment_intent_id" = ${paymentIntentId}
      AND ("dispute_event_at" IS NULL OR "dispute_event_at" <= ${eventAt}::timestamptz)`;
  return n > 0;
}

/** The most purchases one listing returns, newest first. */
export const MAX_LISTED_PURCHASES = 100;

export function listPurchases(prisma: PrismaClient, userId: string) {
  return prisma.purchase.findMany({
    where: { userId },
    orderBy: [{ stripeCreatedAt: 'desc' }, { id: 'asc' }],
    take: MAX_LISTED_PURCHASES,
    include: { items: { orderBy: { position: 'asc' } } },
  });
}
