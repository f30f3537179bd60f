/*
  Warnings:

  - A unique constraint covering the columns `[request_id]` on the table `usage_records` will be added. If there are existing duplicate values, this will fail.

*/
-- DropIndex
DROP INDEX "usage_records_user_id_created_at_idx";

-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "byok" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "cached_tokens" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "cost_micros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "currency" TEXT NOT NULL DEFAULT 'USD',
ADD COLUMN     "estimated" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "xid" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "usage_daily" (
    "user_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "project_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "lane" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "byok" BOOLEAN NOT NULL,
    "currency" TEXT NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "estimated" INTEGER NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "cached_tokens" BIGINT NOT NULL DEFAULT 0,
    "total_tokens" BIGINT NOT NULL DEFAULT 0,
    "cost_micros" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "usage_daily_pkey" PRIMARY KEY ("user_id","day","project_id","api_key_id","lane","provider","model","byok","currency")
);

-- CreateTable
CREATE TABLE "budgets" (
    "user_id" UUID NOT NULL,
    "scope" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "unit" TEXT NOT NULL,
    "limit" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "budgets_pkey" PRIMARY KEY ("user_id","scope","subject","period","unit")
);

-- Before the unique index: rows of an older build may share a client-chosen
-- request id; each keeps its row under a fresh id instead of being dropped.
UPDATE "usage_records" SET "request_id" = gen_random_uuid()
 WHERE "id" IN (SELECT "id" FROM (SELECT "id", row_number() OVER (PARTITION BY "request_id" ORDER BY "id") AS n
                                   FROM "usage_records") d WHERE d.n > 1);

-- CreateIndex
CREATE UNIQUE INDEX "usage_records_request_id_key" ON "usage_records"("request_id");

-- CreateIndex
CREATE INDEX "usage_records_xid_id_idx" ON "usage_records"("xid", "id");

-- CreateIndex
CREATE INDEX "usage_records_user_id_xid_id_idx" ON "usage_records"("user_id", "xid", "id");

-- CreateIndex
CREATE INDEX "usage_records_created_at_idx" ON "usage_records"("created_at");

-- The daily sums of the rows already there (usage reads come from usage_daily now).
INSERT INTO "usage_daily" ("user_id","day","project_id","api_key_id","lane","provider","model","byok","currency",
                           "requests","errors","estimated","prompt_tokens","completion_tokens","cached_tokens","total_tokens","cost_micros")
SELECT "user_id", ("created_at" AT TIME ZONE 'UTC')::date, "project_id", coalesce("api_key_id"::text, ''),
       coalesce("lane", ''), coalesce("provider", ''), coalesce("model", ''), false, 'USD',
       count(*), count(*) FILTER (WHERE "status" >= 400), 0, sum("prompt_tokens"), sum("completion_tokens"), 0,
       sum("total_tokens"), 0
  FROM "usage_records"
 GROUP BY 1, 2, 3, 4, 5, 6, 7;
