import { prismaSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { UsageLedger } from './ledger';
import { insertLedgerRecords } from './repo';

/**
 * The ledger without Redis (embedded mode): each record is committed to
 * Postgres before the answer's last byte. A failed write fails the request's
 * end (the caller logs it); nothing is buffered in memory, so nothing can be
 * lost with the process.
 */
export function createPostgresLedger(prisma: PrismaClient): UsageLedger {
  return {
    append: async (record) => {
      await insertLedgerRecords(prismaSql(prisma), [record]);
    },
    flush: async () => {},
    close: async () => {},
  };
}
