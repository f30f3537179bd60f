-- CreateTable
CREATE TABLE "usage_attempts" (
    "id" BIGSERIAL NOT NULL,
    "request_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "api_key_id" UUID,
    "project_id" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "status" INTEGER,
    "byok" BOOLEAN NOT NULL DEFAULT false,
    "latency_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "usage_attempts_created_at_idx" ON "usage_attempts"("created_at");

-- CreateIndex
CREATE INDEX "usage_attempts_request_id_idx" ON "usage_attempts"("request_id");
