import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '@platform/db';

// PGlite only: the migrated snapshot a test file makes is kept on disk for the files
// after it (each Jest file has its own module registry, so only the disk outlives one).
const paymentMigrations = path.resolve(__dirname, '../../../apps/payment/prisma/migrations');

type DbModule = typeof import('../src/db');

/** ../src/db as a new test file would load it: a fresh module registry, an empty in-memory map. */
function freshDbModule(): DbModule {
  let mod: DbModule | undefined;
  jest.isolateModules(() => {
    mod = require('../src/db') as DbModule;
  });
  return mod as DbModule;
}

describe('the migrated PGlite snapshot kept between test files', () => {
  let cacheDir: string;
  let migrationsDir: string;
  const before = process.env.PLATFORM_TEST_CACHE_DIR;

  beforeEach(() => {
    cacheDir = mkdtempSync(path.join(tmpdir(), 'snapshot-cache-'));
    migrationsDir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    cpSync(paymentMigrations, migrationsDir, { recursive: true });
    process.env.PLATFORM_TEST_CACHE_DIR = cacheDir;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.PLATFORM_TEST_CACHE_DIR;
    else process.env.PLATFORM_TEST_CACHE_DIR = before;
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(migrationsDir, { recursive: true, force: true });
  });

  it('a later file opens the kept snapshot instead of migrating again', async () => {
    const first = await freshDbModule().createTestDatabase({ migrationsDir, serverUrl: null });
    await first.drop();
    const kept = readdirSync(cacheDir);
    expect(kept).toEqual([expect.stringMatching(/^migrated-[0-9a-f]{24}-pglite-\d+\.\d+\.\d+\.tar$/)]);

    // Mark the kept snapshot: a database that shows the mark was opened from the file.
    const file = path.join(cacheDir, kept[0] as string);
    const marked = await openDatabase({ snapshot: new Blob([await readFile(file)]) });
    await marked.exec('CREATE TABLE snapshot_cache_mark (id int)');
    const snapshot = await (marked as { snapshot(): Promise<Blob> }).snapshot();
    await marked.close();
    await writeFile(file, Buffer.from(await snapshot.arrayBuffer()));

    const second = await freshDbModule().createTestDatabase({ migrationsDir, serverUrl: null });
    try {
      const rows = await second.db.query(
        "SELECT 1 AS found FROM information_schema.tables WHERE table_name = 'snapshot_cache_mark'",
      );
      expect(rows).toEqual([{ found: 1 }]);
      expect(await second.db.query('SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 0 }]);
    } finally {
      await second.drop();
    }
  });

  it('a changed migrations folder gets its own snapshot, with the new migration in it', async () => {
    const first = await freshDbModule().createTestDatabase({ migrationsDir, serverUrl: null });
    await first.drop();
    mkdirSync(path.join(migrationsDir, '29990101000000_probe'));
    writeFileSync(
      path.join(migrationsDir, '29990101000000_probe', 'migration.sql'),
      'CREATE TABLE snapshot_probe (id int);',
    );
    const second = await freshDbModule().createTestDatabase({ migrationsDir, serverUrl: null });
    try {
      expect(readdirSync(cacheDir)).toHaveLength(2);
      const rows = await second.db.query(
        "SELECT 1 AS found FROM information_schema.tables WHERE table_name = 'snapshot_probe'",
      );
      expect(rows).toEqual([{ found: 1 }]);
    } finally {
      await second.drop();
    }
  });
});
