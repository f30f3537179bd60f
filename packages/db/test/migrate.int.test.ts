import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { applyMigrations, MigrationError, type MigrationRecord, sha256Hex } from '../src';
import { backends, createFreshDatabase, type FreshDatabase } from './backends';

/**
 * The payment app's first schema and migration, frozen here so these tests do
 * not change with every migration the app adds.
 */
const paymentMigrations = path.resolve(__dirname, 'fixtures/payment-init/prisma/migrations');

async function writeMigrations(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) {
    await fs.mkdir(path.join(dir, name));
    await fs.writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  await fs.writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  return dir;
}

const twoMigrations = {
  '20260101000000_a': 'CREATE TABLE "a" ("id" TEXT PRIMARY KEY);\n',
  // The sleep widens the window in which two unlocked runners would collide.
  '20260102000000_b': 'SELECT pg_sleep(0.2);\nCREATE TABLE "b" ("id" TEXT PRIMARY KEY);\n',
};

describe.each(backends)('applyMigrations on %s', (kind) => {
  let fresh: FreshDatabase;
  beforeEach(async () => {
    fresh = await createFreshDatabase(kind);
  });
  afterEach(async () => {
    await fresh.drop();
  });

  it('applies every migration once and records it as Prisma does', async () => {
    const db = await fresh.open();
    const first = await applyMigrations({ db, migrationsDir: paymentMigrations });
    expect(first.applied).toEqual(['20261122000018_init']);
    const second = await applyMigrations({ db, migrationsDir: paymentMigrations });
    expect(second.applied).toEqual([]);

    const rows = await db.query<MigrationRecord>('SELECT * FROM "_prisma_migrations"');
    const sql = await fs.readFile(path.join(paymentMigrations, '20261122000018_init/migration.sql'));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      migration_name: '20261122000018_init',
      checksum: sha256Hex(sql),
      logs: null,
      rolled_back_at: null,
      applied_steps_count: 1,
    });
    expect(rows[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(rows[0]?.finished_at).toBeInstanceOf(Date);
    const tables = await db.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    expect(tables.map((t) => t.name)).toEqual([
      '_prisma_migrations',
      'customers',
      'subscription_items',
      'subscriptions',
      'webhook_events',
    ]);
  });

  it('creates _prisma_migrations with the columns of Prisma', async () => {
    const db = await fresh.open();
    await applyMigrations({ db, migrationsDir: await writeMigrations({}) });
    const columns = await db.query(
      `SELECT column_name, data_type, character_maximum_length AS len, is_nullable, column_default
       FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', len: 36, is_nullable: 'NO', column_default: null },
      {
        column_name: 'checksum',
        data_type: 'character varying',
        len: 64,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'finished_at',
        data_type: 'timestamp with time zone',
        len: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'migration_name',
        data_type: 'character varying',
        len: 255,
        is_nullable: 'NO',
        column_default: null,
      },
      { column_name: 'logs', data_type: 'text', len: null, is_nullable: 'YES', column_default: null },
      {
        column_name: 'rolled_back_at',
        data_type: 'timestamp with time zone',
        len: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'started_at',
        data_type: 'timestamp with time zone',
        len: null,
        is_nullable: 'NO',
        column_default: 'now()',
      },
      {
        column_name: 'applied_steps_count',
        data_type: 'integer',
        len: null,
        is_nullable: 'NO',
        column_default: '0',
      },
    ]);
  });

  it('two runners started together apply each migration exactly once', async () => {
    const migrationsDir = await writeMigrations(twoMigrations);
    const [a, b] = [await fresh.open(), await fresh.open()];
    const results = await Promise.all([
      applyMigrations({ db: a, migrationsDir }),
      applyMigrations({ db: b, migrationsDir }),
    ]);
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 2]);
    const rows = await a.query<{ migration_name: string; n: number }>(
      'SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY 1 ORDER BY 1',
    );
    expect(rows).toEqual([
      { migration_name: '20260101000000_a', n: 1 },
      { migration_name: '20260102000000_b', n: 1 },
    ]);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const db = await fresh.open();
    const migrationsDir = await writeMigrations(twoMigrations);
    await applyMigrations({ db, migrationsDir });
    await fs.appendFile(path.join(migrationsDir, '20260101000000_a/migration.sql'), '-- edited\n');
    await expect(applyMigrations({ db, migrationsDir })).rejects.toThrow(
      /`20260101000000_a` was modified after it was applied/,
    );
  });

  it('accepts an applied migration whose line endings were converted', async () => {
    const db = await fresh.open();
    const migrationsDir = await writeMigrations(twoMigrations);
    await applyMigrations({ db, migrationsDir });
    const file = path.join(migrationsDir, '20260102000000_b/migration.sql');
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace(/\n/g, '\r\n'));
    await expect(applyMigrations({ db, migrationsDir })).resolves.toEqual({ applied: [] });
  });

  it('a failing migration is rolled back, recorded as failed, and blocks later runs', async () => {
    const db = await fresh.open();
    const migrationsDir = await writeMigrations({
      '20260101000000_a': 'CREATE TABLE "a" ("id" TEXT PRIMARY KEY);\nSELECT * FROM "missing_table";\n',
    });
    await expect(applyMigrations({ db, migrationsDir })).rejects.toThrow(
      /`20260101000000_a` failed to apply: .*missing_table/,
    );
    const [table] = await db.query<{ t: string | null }>(`SELECT to_regclass('"a"')::text AS t`);
    expect(table?.t).toBeNull();
    const rows = await db.query<MigrationRecord>('SELECT * FROM "_prisma_migrations"');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      migration_name: '20260101000000_a',
      finished_at: null,
      rolled_back_at: null,
    });
    expect(rows[0]?.logs).toMatch(/missing_table/);

    const error = await applyMigrations({ db, migrationsDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toMatch(/failed migration .*`20260101000000_a`/);

    // What `prisma migrate resolve --rolled-back` does; then the fixed file applies.
    await db.query('UPDATE "_prisma_migrations" SET rolled_back_at = now()');
    await fs.writeFile(
      path.join(migrationsDir, '20260101000000_a/migration.sql'),
      'CREATE TABLE "a" ("id" TEXT);\n',
    );
    await expect(applyMigrations({ db, migrationsDir })).resolves.toEqual({ applied: ['20260101000000_a'] });
  });

  it('rejects a migration folder without migration.sql', async () => {
    const db = await fresh.open();
    const migrationsDir = await writeMigrations({});
    await fs.mkdir(path.join(migrationsDir, '20260101000000_empty'));
    await expect(applyMigrations({ db, migrationsDir })).rejects.toThrow(
      /20260101000000_empty has no readable/,
    );
  });
});
