-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "cache_write_tokens" INTEGER NOT NULL DEFAULT 0;
