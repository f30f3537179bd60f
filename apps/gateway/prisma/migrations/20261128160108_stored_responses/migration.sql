-- CreateTable
CREATE TABLE "stored_responses" (
    "id" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "response" JSONB NOT NULL,
    "messages" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "stored_responses_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "stored_responses_user_id_idx" ON "stored_responses"("user_id");

-- CreateIndex
CREATE INDEX "stored_responses_expires_at_idx" ON "stored_responses"("expires_at");

-- AddForeignKey
ALTER TABLE "stored_responses" ADD CONSTRAINT "stored_responses_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
