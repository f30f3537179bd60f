-- CreateTable
CREATE TABLE "request_log" (
    "request_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "api_key_id" UUID,
    "project_id" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "lane" TEXT,
    "provider" TEXT,
    "model" TEXT,
    "status" INTEGER NOT NULL,
    "prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "completion_tokens" INTEGER NOT NULL DEFAULT 0,
    "cached_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_micros" BIGINT NOT NULL DEFAULT 0,
    "currency" TEXT NOT NULL DEFAULT 'USD',
    "latency_ms" INTEGER NOT NULL,
    "ttft_ms" INTEGER,
    "user_agent" TEXT,
    "error" TEXT,
    "attempts" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "request_log_pkey" PRIMARY KEY ("request_id")
);

-- CreateIndex
CREATE INDEX "request_log_user_id_created_at_idx" ON "request_log"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "request_log_created_at_idx" ON "request_log"("created_at");
