import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  applyMigrations,
  type Database,
  loadPristineSnapshot,
  openDatabase,
  pgliteVersion,
} from '@platform/db';
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

// Creating a PGlite cluster and migrating it took 10-28 s of a test file's time on the
// shared 2-core machine (initdb inside PGlite, then every migration); opening a migrated
// snapshot takes about 1.5 s. Jest gives every test file its own module registry, so a
// map here lasts one file: the snapshot is also kept on disk, named after the migrations
// folder's content and PGlite's version, and every file and run after the first opens
// it. It is written under a temporary name and renamed, so a snapshot file is always
// whole; applyMigrations still checks each opened copy's history against the folder.
const migratedSnapshots = new Map<string, Promise<Blob>>();

/** Where migrated PGlite snapshots are kept between test files (PLATFORM_TEST_CACHE_DIR overrides). */
function snapshotCacheDir(): string {
  return process.env.PLATFORM_TEST_CACHE_DIR || path.join(os.tmpdir(), 'platform-test-pglite');
}

async function makeMigratedSnapshot(migrationsDir: string): Promise<Blob> {
  const db = await openDatabase({ snapshot: await loadPristineSnapshot() });
  try {
    await applyMigrations({ db, migrationsDir });
    return await db.snapshot();
  } finally {
    await db.close();
  }
}

async function cachedMigratedSnapshot(migrationsDir: string): Promise<Blob> {
  const dir = snapshotCacheDir();
  const file = path.join(
    dir,
    `migrated-${await migrationsHash(migrationsDir)}-pglite-${pgliteVersion()}.tar`,
  );
  const kept = await readFile(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (kept) return new Blob([kept]);
  const made = await makeMigratedSnapshot(migrationsDir);
  await mkdir(dir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, Buffer.from(await made.arrayBuffer()));
  await rename(temporary, file);
  return made;
}

function loadMigratedSnapshot(migrationsDir: string): Promise<Blob> {
  const key = path.resolve(migrationsDir);
  let snapshot = migratedSnapshots.get(key);
  if (!snapshot) {
    snapshot = cachedMigratedSnapshot(key);
    snapshot.catch(() => migratedSnapshots.delete(key));
    migratedSnapshots.set(key, snapshot);
  }
  return snapshot;
}

async function runAdmin(serverUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

// Migrating a new Postgres database took 1-1.5 s per test file; copying a migrated
// one (CREATE DATABASE ... TEMPLATE) about 0.3 s. The template is named after the
// migrations folder's content, so every worker and every run of the same migrations
// shares it and a changed migration gets a new one. It is made under a temporary name
// and renamed when migrated: a database named tpl_<hash> is always complete.
const templates = new Map<string, Promise<string>>();

async function migrationsHash(migrationsDir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const rel = `${prefix}${entry.name}`;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${rel}/`);
      else
        hash
          .update(`${rel}\0`)
          .update(await readFile(path.join(dir, entry.name)))
          .update('\0');
    }
  };
  await walk(migrationsDir, '');
  return hash.digest('hex').slice(0, 24);
}

async function makeTemplate(serverUrl: string, migrationsDir: string): Promise<string> {
  const name = `tpl_${await migrationsHash(migrationsDir)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return name;
  } finally {
    await admin.end();
  }
  const building = `tpl_building_${randomBytes(8).toString('hex')}`;
  await runAdmin(serverUrl, `CREATE DATABASE "${building}"`);
  try {
    const db = await openDatabase({ url: databaseUrl(serverUrl, building) });
    try {
      await applyMigrations({ db, migrationsDir });
    } finally {
      await db.close();
    }
    // Another worker may have renamed its copy first (42P04): then use that one. A
    // closed connection's backend can outlive close() for a moment (55006): retry.
    for (let attempt = 1; ; attempt += 1) {
      const code = await runAdmin(serverUrl, `ALTER DATABASE "${building}" RENAME TO "${name}"`).then(
        () => undefined,
        (err: { code?: string }) => {
          if (err.code === '42P04' || (err.code === '55006' && attempt < 50)) return err.code;
          throw err;
        },
      );
      if (code !== '55006') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await runAdmin(serverUrl, `DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
  }
  return name;
}

function migratedTemplate(serverUrl: string, migrationsDir: string): Promise<string> {
  const key = `${serverUrl}\n${path.resolve(migrationsDir)}`;
  let template = templates.get(key);
  if (!template) {
    template = makeTemplate(serverUrl, path.resolve(migrationsDir));
    template.catch(() => templates.delete(key));
    templates.set(key, template);
  }
  return template;
}

async function createPostgresDatabase(serverUrl: string, migrationsDir: string): Promise<TestDatabase> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  const template = await migratedTemplate(serverUrl, migrationsDir);
  await runAdmin(serverUrl, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  const url = databaseUrl(serverUrl, name);
  const db = await openDatabase({ url });
  const drop = async () => {
    await db.close();
    await runAdmin(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
  try {
    // Verifies the copy's history against the folder; applies nothing.
    await applyMigrations({ db, migrationsDir });
  } catch (err) {
    await drop();
    throw err;
  }
  return { db, adapter: db.adapter, url, kind: 'postgres', drop };
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
