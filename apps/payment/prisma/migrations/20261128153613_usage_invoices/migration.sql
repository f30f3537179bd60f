-- AlterTable
ALTER TABLE "subscription_items" ADD COLUMN     "currency" TEXT,
ADD COLUMN     "current_period_start" TIMESTAMPTZ(3),
ADD COLUMN     "meter_id" TEXT;

-- AlterTable
ALTER TABLE "usage_events" ADD COLUMN     "first_attempt_at" TIMESTAMPTZ(3),
ADD COLUMN     "hold_reason" TEXT;

-- CreateTable
CREATE TABLE "usage_event_refusals" (
    "id" TEXT NOT NULL,
    "user_id" TEXT,
    "meter" TEXT,
    "value" INTEGER,
    "occurred_at" TIMESTAMPTZ(3),
    "reason" TEXT NOT NULL,
    "detail" TEXT NOT NULL,
    "event" JSONB NOT NULL,
    "times" INTEGER NOT NULL DEFAULT 1,
    "first_refused_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_refused_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_event_refusals_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "usage_event_refusals_last_refused_at_idx" ON "usage_event_refusals"("last_refused_at");
