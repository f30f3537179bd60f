-- CreateTable
CREATE TABLE "billing_cursors" (
    "name" TEXT NOT NULL,
    "xid" BIGINT NOT NULL DEFAULT 0,
    "seq" BIGINT NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "billing_cursors_pkey" PRIMARY KEY ("name")
);
