import { openDatabase } from './database';
import type { Database, DbLogger } from './database-types';
import { createKeyValueStore } from './kv';
import type { KeyValueStore } from './kv-types';
import { applyMigrations } from './migrate';

export type OpenServiceStorageOptions = {
  /** Postgres URL; unset -> embedded PGlite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** Redis URL; unset -> in-process store (one instance only). */
  redisUrl?: string;
  keyPrefix: string;
  /** The app's prisma/migrations folder, applied before anything else runs. */
  migrationsDir: string;
  logger: DbLogger;
  /** Most Postgres connections this process opens (its share of the connection budget). */
  poolMax?: number;
  /** Bound on a new Postgres connection (default 1,500 ms): past it the request is answered 503. */
  databaseConnectTimeoutMs?: number;
  /** Bound on every Redis command (default 750 ms): past it the request is answered 503. */
  redisCommandTimeoutMs?: number;
};

export type ServiceStorage = { db: Database; kv: KeyValueStore; close(): Promise<void> };

/**
 * What each service opens at start: its database with pending migrations applied
 * (under Prisma's advisory lock), and its key-value store. Says loudly when it
 * falls back to the embedded, single-instance defaults.
 */
export async function openServiceStorage(opts: OpenServiceStorageOptions): Promise<ServiceStorage> {
  const { logger } = opts;
  const db = await openDatabase({
    url: opts.databaseUrl,
    dataDir: opts.databaseUrl ? undefined : opts.dataDir,
    logger,
    poolMax: opts.poolMax,
    connectTimeoutMs: opts.databaseConnectTimeoutMs,
  });
  const { applied } = await applyMigrations({ db, migrationsDir: opts.migrationsDir, logger });
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  if (!opts.databaseUrl)
    logger.warn({ dataDir: opts.dataDir }, 'DATABASE_URL unset: embedded PGlite database');
  if (!opts.redisUrl) logger.warn({}, 'REDIS_URL unset: in-process stores (single instance only)');
  const kv = createKeyValueStore({
    url: opts.redisUrl,
    keyPrefix: opts.keyPrefix,
    commandTimeoutMs: opts.redisCommandTimeoutMs,
  });
  return {
    db,
    kv,
    async close() {
      await db.close();
      await kv.close();
    },
  };
}
