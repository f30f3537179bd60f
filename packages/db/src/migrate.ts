import { randomUUID } from 'node:crypto';
import type { Database, DbLogger, DbSession } from './database-types';
import { type MigrationFile, matchesChecksum, readMigrationFiles } from './migration-files';

/** The key Prisma's schema engine locks, so this runner and `prisma migrate deploy` exclude each other. */
export const PRISMA_ADVISORY_LOCK_KEY = 72707369;

/** Prisma's own DDL for its history table, as the schema engine sends it. */
export const PRISMA_MIGRATIONS_TABLE_DDL = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);
`;

/** A row of `_prisma_migrations`. */
export type MigrationRecord = {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
};

/** Thrown when the history in the database forbids applying migrations, or one fails. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export type ApplyMigrationsOptions = {
  db: Database;
  /** The `prisma/migrations` folder. */
  migrationsDir: string;
  logger?: DbLogger;
  /** How long to wait for another instance's migration run; default 60 s. */
  lockTimeoutMs?: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function acquireLock(session: DbSession, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    const [row] = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      PRISMA_ADVISORY_LOCK_KEY,
    ]);
    if (row?.locked) return;
    if (Date.now() >= deadline) {
      throw new MigrationError(
        `Timed out after ${timeoutMs} ms waiting for the migration advisory lock (${PRISMA_ADVISORY_LOCK_KEY}) held by another process`,
      );
    }
    await sleep(wait);
  }
}

/** Reads the history, creating the table with Prisma's DDL when it is missing. */
export async function readMigrationHistory(session: DbSession): Promise<MigrationRecord[]> {
  const [row] = await session.query<{ present: boolean }>(
    `SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`,
  );
  if (!row?.present) await session.exec(PRISMA_MIGRATIONS_TABLE_DDL);
  return session.query<MigrationRecord>(
    'SELECT "id", "checksum", "finished_at", "migration_name", "logs", "rolled_back_at", "started_at", "applied_steps_count" FROM "_prisma_migrations" ORDER BY "started_at" ASC',
  );
}

/** Refuses, as `prisma migrate deploy` does, a failed migration; also refuses an edited one. */
function checkHistory(records: MigrationRecord[], files: MigrationFile[]): void {
  const failed = records.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      `Found a failed migration in the database, new migrations will not be applied: \`${failed.migration_name}\` started at ${new Date(failed.started_at).toISOString()} failed${failed.logs ? `: ${failed.logs}` : ''}. Fix the database, then mark it with \`prisma migrate resolve --rolled-back ${failed.migration_name}\` (or --applied).`,
    );
  }
  for (const record of records) {
    if (record.rolled_back_at !== null) continue;
    const file = files.find((f) => f.name === record.migration_name);
    if (file && !matchesChecksum(file, record.checksum)) {
      throw new MigrationError(
        `Migration \`${record.migration_name}\` was modified after it was applied: the checksum of its migration.sql differs from the one recorded in the database. Restore the file; add changes as a new migration.`,
      );
    }
  }
}

async function applyOne(session: DbSession, file: MigrationFile): Promise<void> {
  const id = randomUUID();
  const startedAt = new Date();
  try {
    // Same statements as the schema engine, but in one transaction: a crash
    // midway leaves neither half a schema nor a half-written history row.
    await session.transaction(async (tx) => {
      await tx.query(
        'INSERT INTO "_prisma_migrations" ("id","checksum","started_at","migration_name") VALUES ($1,$2,$3,$4)',
        [id, file.checksum, startedAt, file.name],
      );
      await tx.exec(file.sql);
      await tx.query(
        'UPDATE "_prisma_migrations" SET "applied_steps_count" = ("applied_steps_count" + $1) WHERE "id" = $2',
        [1, id],
      );
      await tx.query('UPDATE "_prisma_migrations" SET "finished_at" = $1 WHERE "id" = $2', [new Date(), id]);
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // Record the failure the way Prisma does (finished_at null, logs set), so the
    // next start refuses until someone looks at it.
    await session
      .query(
        'INSERT INTO "_prisma_migrations" ("id","checksum","started_at","migration_name","logs") VALUES ($1,$2,$3,$4,$5)',
        [id, file.checksum, startedAt, file.name, message],
      )
      .catch(() => undefined);
    throw new MigrationError(`Migration \`${file.name}\` failed to apply: ${message}`, { cause: err });
  }
}

async function applyPending(
  session: DbSession,
  files: MigrationFile[],
  logger?: DbLogger,
): Promise<string[]> {
  const records = await readMigrationHistory(session);
  checkHistory(records, files);
  const done = new Set(records.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
  const unknown = [...done].filter((name) => !files.some((f) => f.name === name));
  if (unknown.length > 0) {
    logger?.warn({ migrations: unknown }, 'database has migrations that are not in the migrations folder');
  }
  const applied: string[] = [];
  for (const file of files.filter((f) => !done.has(f.name))) {
    await applyOne(session, file);
    applied.push(file.name);
    logger?.info({ migration: file.name }, 'migration applied');
  }
  return applied;
}

/**
 * Applies the pending migration folders in name order, each in its own
 * transaction, writing `_prisma_migrations` rows as Prisma does. Holds Prisma's
 * advisory lock meanwhile, so instances starting together never race.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<{ applied: string[] }> {
  const files = await readMigrationFiles(options.migrationsDir);
  return options.db.withSession(async (session) => {
    await acquireLock(session, options.lockTimeoutMs ?? 60_000);
    const unlock = () => session.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    let applied: string[];
    try {
      applied = await applyPending(session, files, options.logger);
    } catch (err) {
      // A Postgres session that failed is destroyed (which frees the lock) even if this fails.
      await unlock().catch(() => undefined);
      throw err;
    }
    await unlock();
    return { applied };
  });
}
