-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "checkout_pending_since" TIMESTAMPTZ(3),
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "purchases" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "stripe_customer_id" TEXT,
    "payment_intent_id" TEXT,
    "payment_status" TEXT NOT NULL,
    "amount_total" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "amount_refunded" INTEGER NOT NULL DEFAULT 0,
    "dispute_status" TEXT,
    "dispute_event_at" TIMESTAMPTZ(3),
    "stripe_created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "purchases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "purchase_items" (
    "purchase_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "price_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "amount_total" INTEGER NOT NULL,

    CONSTRAINT "purchase_items_pkey" PRIMARY KEY ("purchase_id","position")
);

-- CreateTable
CREATE TABLE "entitlements" (
    "user_id" TEXT NOT NULL,
    "lookup_key" TEXT NOT NULL,
    "feature_id" TEXT NOT NULL,
    "stripe_customer_id" TEXT NOT NULL,
    "synced_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "entitlements_pkey" PRIMARY KEY ("user_id","lookup_key")
);

-- CreateTable
CREATE TABLE "entitlement_syncs" (
    "user_id" TEXT NOT NULL,
    "synced_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "entitlement_syncs_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "reconcile_cursors" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "reconcile_cursors_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "purchases_payment_intent_id_key" ON "purchases"("payment_intent_id");

-- CreateIndex
CREATE INDEX "purchases_user_id_idx" ON "purchases"("user_id");

-- AddForeignKey
ALTER TABLE "purchase_items" ADD CONSTRAINT "purchase_items_purchase_id_fkey" FOREIGN KEY ("purchase_id") REFERENCES "purchases"("id") ON DELETE CASCADE ON UPDATE CASCADE;
