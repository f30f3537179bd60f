import type { RawSql } from '../batching/raw-sql';
import type { UsageLedger } from './ledger';
import { insertLedgerRecords } from './repo';

/**
 * The ledger without Redis (embedded mode): each record is committed to
 * Postgres before the answer's last byte. A failed write fails the request's
 * end (the caller logs it); nothing is buffered in memory, so nothing can be
 * lost with the process. Raw SQL on the pool, not Prisma (a chat's writes stay off
 * Prisma's query compiler: docs/performance.md, issue 46).
 */
export function createPostgresLedger(sql: RawSql): UsageLedger {
  return {
    append: async (record) => {
      await insertLedgerRecords(sql, [record]);
    },
    flush: async () => {},
    close: async () => {},
  };
}
