import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { applyMigrations, type Database, loadPristineSnapshot, openDatabase } from '@platform/db';
import pg from 'pg';
import { testServerUrls } from './servers/env';

/** A migrated database owned by one test file or test; drop() removes it. */
export type TestDatabase = {
  db: Database;
  /** Pass to `new PrismaClient({ adapter })`. */
  adapter: Database['adapter'];
  /** Connection URL of the created database (Postgres only), e.g. for a second client. */
  url?: string;
  kind: 'postgres' | 'pglite';
  /** Closes the database and, on Postgres, drops it. Disconnect PrismaClient first. */
  drop(): Promise<void>;
};

export type CreateTestDatabaseOptions = {
  /** The app's `prisma/migrations` folder. */
  migrationsDir: string;
  /**
   * Postgres server to create the database on; default TEST_DATABASE_URL.
   * Without one, or with null, PGlite in memory.
   */
  serverUrl?: string | null;
};

// Creating a PGlite cluster and migrating it takes seconds; a migrated snapshot
// opens in well under one, so each worker migrates once per migrations folder.
const migratedSnapshots = new Map<string, Promise<Blob>>();

function loadMigratedSnapshot(migrationsDir: string): Promise<Blob> {
  const key = path.resolve(migrationsDir);
  let snapshot = migratedSnapshots.get(key);
  if (!snapshot) {
    snapshot = (async () => {
      const db = await openDatabase({ snapshot: await loadPristineSnapshot() });
      try {
        await applyMigrations({ db, migrationsDir: key });
        return await db.snapshot();
      } finally {
        await db.close();
      }
    })();
    snapshot.catch(() => migratedSnapshots.delete(key));
    migratedSnapshots.set(key, snapshot);
  }
  return snapshot;
}

async function createPostgresDatabase(serverUrl: string, migrationsDir: string): Promise<TestDatabase> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  const runAdmin = async (sql: string) => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };
  await runAdmin(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  const drop = async () => {
    await db.close();
    await runAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
  try {
    await applyMigrations({ db, migrationsDir });
  } catch (err) {
    await drop();
    throw err;
  }
  return { db, adapter: db.adapter, url: url.toString(), kind: 'postgres', drop };
}

/**
 * A fresh, migrated database: a uniquely named one (`t_<random>`) on the
 * TEST_DATABASE_URL server, or an in-memory PGlite. Test files can run in parallel.
 */
export async function createTestDatabase(options: CreateTestDatabaseOptions): Promise<TestDatabase> {
  const serverUrl = options.serverUrl === undefined ? testServerUrls().databaseUrl : options.serverUrl;
  if (serverUrl) return createPostgresDatabase(serverUrl, options.migrationsDir);
  const db = await openDatabase({ snapshot: await loadMigratedSnapshot(options.migrationsDir) });
  // Verifies the snapshot's history against the folder; applies nothing.
  await applyMigrations({ db, migrationsDir: options.migrationsDir });
  return { db, adapter: db.adapter, kind: 'pglite', drop: () => db.close() };
}
