import type { SqlRunner } from '@platform/db';
import type { PrismaClient } from '../generated/prisma/client';

/**
 * One raw statement with `$1`-style parameters: the batched inserts (the
 * ledger's and the request log's), and every statement a chat or a worker's
 * timer runs, which stay off Prisma's query compiler (~8-9 MB per worker once
 * loaded; docs/performance.md, issue 46). In the service it is `@platform/db`'s
 * `query` on the pool Prisma also uses: pg binds the batch's one JSON text
 * parameter and reads the small result itself, where Prisma's
 * `$queryRawUnsafe` spent ~4 µs of client CPU per row of a 500-row batch
 * against ~1.1 through pg (docs/performance.md, sessions 14 and 15). With
 * `copyFrom` (the service's pool has it; Prisma has not) the request log
 * loads its batches with COPY.
 */
export type RawSql = Pick<SqlRunner, 'query' | 'execute'> & Partial<Pick<SqlRunner, 'copyFrom'>>;

/** The same statements through a Prisma client or transaction (cold paths, and tests without a pool). */
export function prismaSql(prisma: Pick<PrismaClient, '$queryRawUnsafe' | '$executeRawUnsafe'>): RawSql {
  return {
    query: <T extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
      prisma.$queryRawUnsafe<T[]>(sql, ...params),
    execute: (sql: string, params: unknown[] = []) => prisma.$executeRawUnsafe(sql, ...params),
  };
}
