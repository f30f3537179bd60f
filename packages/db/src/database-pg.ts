import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { DbLogger, DbSession, PostgresDatabase, Row, SqlRunner } from './database-types';

/**
 * pg-copy-streams, loaded by the first COPY (a batch of usage rows, written
 * after the first answers): an idle worker does not hold it (~0.3 MB, issue 46).
 */
let copyStreams: typeof import('pg-copy-streams') | undefined;

async function copyOn(client: pg.PoolClient, sql: string, data: string): Promise<void> {
  copyStreams ??= require('pg-copy-streams') as typeof import('pg-copy-streams');
  await pipeline(Readable.from([data]), client.query(copyStreams.from(sql)));
}

function createRunner(client: pg.Pool | pg.PoolClient): SqlRunner {
  return {
    async query<T extends Row = Row>(sql: string, params?: unknown[]) {
      const result = await client.query<T>(sql, params);
      return result.rows;
    },
    async execute(sql: string, params?: unknown[]) {
      return (await client.query(sql, params)).rowCount ?? 0;
    },
    async exec(sql: string) {
      // Without parameters pg uses the simple query protocol, which accepts several statements.
      await client.query(sql);
    },
    async copyFrom(sql: string, data: string) {
      if (!(client instanceof pg.Pool)) return copyOn(client, sql, data);
      const held = await client.connect();
      let failure: Error | undefined;
      try {
        await copyOn(held, sql, data);
      } catch (err) {
        // A COPY that failed part-way may leave the connection mid-protocol: destroy it.
        failure = err instanceof Error ? err : new Error(String(err));
        throw err;
      } finally {
        held.release(failure);
      }
    },
  };
}

async function runTransaction<T>(client: pg.PoolClient, fn: (tx: SqlRunner) => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await fn(createRunner(client));
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Postgres through one pg Pool, shared by Prisma (PrismaPg accepts a pool) and raw SQL. */
export async function openPostgres(
  url: string,
  logger?: DbLogger,
  poolMax?: number,
  connectTimeoutMs = 1500,
): Promise<PostgresDatabase> {
  // A refused or hanging connection fails within connectTimeoutMs (answered 503) instead of waiting for ever.
  // `max`: the process's share of the service's connection budget (service-kit databasePoolSize).
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    max: poolMax,
  });
  // An idle client that loses its server emits 'error' on the pool; unhandled it would crash the process.
  pool.on('error', (err) =>
    logger?.warn({ err: { message: err.message } }, 'idle postgres connection failed'),
  );
  const adapter = new PrismaPg(pool, { disposeExternalPool: false });
  let closed = false;

  async function withSession<T>(fn: (session: DbSession) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      return await fn({ ...createRunner(client), transaction: (txFn) => runTransaction(client, txFn) });
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      // After a failure the connection may still hold session state (locks, an open
      // transaction): destroy it instead of handing it to the next caller.
      client.release(failure);
    }
  }

  return {
    kind: 'postgres',
    adapter,
    ...createRunner(pool),
    withSession,
    transaction: (fn) => withSession((session) => session.transaction(fn)),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
