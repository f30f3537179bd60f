-- CreateTable
CREATE TABLE "usage_events" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "meter" TEXT NOT NULL,
    "event_name" TEXT NOT NULL,
    "value" INTEGER NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_until" TIMESTAMPTZ(3),
    "claim_token" TEXT,
    "stripe_customer_id" TEXT,
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "meter_error_reports" (
    "id" TEXT NOT NULL,
    "meter_id" TEXT,
    "summary" TEXT NOT NULL,
    "error_count" INTEGER NOT NULL,
    "error_types" JSONB NOT NULL,
    "validation_start" TIMESTAMPTZ(3),
    "validation_end" TIMESTAMPTZ(3),
    "stripe_created_at" TIMESTAMPTZ(3) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "meter_error_reports_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "usage_events_status_next_attempt_at_idx" ON "usage_events"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "usage_events_user_id_occurred_at_idx" ON "usage_events"("user_id", "occurred_at");

-- CreateIndex
CREATE INDEX "meter_error_reports_received_at_idx" ON "meter_error_reports"("received_at");
