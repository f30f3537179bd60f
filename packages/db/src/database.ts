import { openPostgres } from './database-pg';
import { openPglite } from './database-pglite';
import type { Database, OpenDatabaseOptions, PgliteDatabase, PostgresDatabase } from './database-types';

/** Opens Postgres when `url` is given, else PGlite (persisted in dataDir, or in memory). */
export async function openDatabase(options: OpenDatabaseOptions & { url: string }): Promise<PostgresDatabase>;
export async function openDatabase(
  options: OpenDatabaseOptions & { url?: undefined },
): Promise<PgliteDatabase>;
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database>;
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url)
    return openPostgres(options.url, options.logger, options.poolMax, options.connectTimeoutMs);
  return openPglite(options);
}
