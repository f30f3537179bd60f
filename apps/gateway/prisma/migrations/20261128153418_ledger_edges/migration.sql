-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "client_request_id" UUID;

-- CreateTable
CREATE TABLE "usage_parked" (
    "id" BIGSERIAL NOT NULL,
    "entry_id" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "parked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_parked_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "usage_parked_parked_at_idx" ON "usage_parked"("parked_at");
