-- AlterTable
ALTER TABLE "request_log" ADD COLUMN     "answer" TEXT,
ADD COLUMN     "prompt" TEXT;

-- CreateTable
CREATE TABLE "project_settings" (
    "owner_user_id" UUID NOT NULL,
    "project_id" TEXT NOT NULL,
    "capture_content" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_settings_pkey" PRIMARY KEY ("owner_user_id","project_id")
);

-- CreateIndex
CREATE INDEX "request_log_user_id_api_key_id_created_at_idx" ON "request_log"("user_id", "api_key_id", "created_at");

-- CreateIndex
CREATE INDEX "request_log_user_id_project_id_created_at_idx" ON "request_log"("user_id", "project_id", "created_at");

-- CreateIndex
CREATE INDEX "request_log_user_id_model_created_at_idx" ON "request_log"("user_id", "model", "created_at");

-- CreateIndex
CREATE INDEX "request_log_user_id_status_created_at_idx" ON "request_log"("user_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "request_log_user_id_cost_micros_idx" ON "request_log"("user_id", "cost_micros");

-- CreateIndex
CREATE INDEX "request_log_user_id_latency_ms_idx" ON "request_log"("user_id", "latency_ms");
