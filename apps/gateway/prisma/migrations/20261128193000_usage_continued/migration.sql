-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "continued" BOOLEAN NOT NULL DEFAULT false;
