import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeWith } from '@platform/testing/servers';
import pg from 'pg';
import {
  applyMigrations,
  createMigration,
  diagnoseMigrations,
  diffDatabaseToSchema,
  diffEmptyToSchema,
  type MigrationRecord,
  resolvePrismaPaths,
  type SchemaEngineTarget,
} from '../src';
import {
  NO_FILTERS,
  readEngineMigrationsList,
  readSchemaFiles,
  withSchemaEngine,
} from '../src/schema-engine';
import { backends, createFreshDatabase, postgres, postgresServerUrl } from './backends';

/** The payment app's first schema and migration, frozen so these tests do not move with the app. */
const payment = resolvePrismaPaths(path.resolve(__dirname, 'fixtures/payment-init'));

/** A copy of the payment app's prisma folder that a test may change. */
async function copyPaymentApp(): Promise<string> {
  const appDir = await fs.mkdtemp(path.join(os.tmpdir(), 'app-'));
  await fs.cp(path.dirname(payment.schemaPath), path.join(appDir, 'prisma'), { recursive: true });
  return appDir;
}

const noteModel = `
model Note {
  id   String @id
  body String
  @@map("notes")
}
`;

describe('schema engine (wasm)', () => {
  it('diff from empty reproduces the committed init migration', async () => {
    const init = await fs.readFile(
      path.join(payment.migrationsDir, '20261122000018_init/migration.sql'),
      'utf8',
    );
    // Like `prisma migrate diff --from-empty`, the script also creates the schema itself.
    const diff = await diffEmptyToSchema({ schemaPath: payment.schemaPath });
    expect(diff.replace('-- CreateSchema\nCREATE SCHEMA IF NOT EXISTS "public";\n\n', '').trim()).toBe(
      init.trim(),
    );
  });

  it('createMigration writes a new migration for a schema change, then finds nothing more to do', async () => {
    const appDir = await copyPaymentApp();
    const paths = resolvePrismaPaths(appDir);
    await fs.appendFile(paths.schemaPath, noteModel);

    const created = await createMigration({ ...paths, name: 'add_notes' });
    expect(created?.name).toMatch(/^\d{14}_add_notes$/);
    expect(created?.sql).toContain('CREATE TABLE "notes"');
    const written = await fs.readFile(path.join(paths.migrationsDir, created!.name, 'migration.sql'), 'utf8');
    expect(written).toBe(created?.sql);

    await expect(createMigration({ ...paths, name: 'again' })).resolves.toBeNull();
  }, 180_000);
});

describe.each(backends)('schema engine against %s', (kind) => {
  it('reports the missing tables of an empty database as a diff', async () => {
    const fresh = await createFreshDatabase(kind);
    try {
      const db = await fresh.open();
      const target: SchemaEngineTarget = fresh.url ? { databaseUrl: fresh.url } : { db };
      const diff = await diffDatabaseToSchema({ ...target, schemaPath: payment.schemaPath });
      expect(diff).toContain('CREATE TABLE "customers"');
    } finally {
      await fresh.drop();
    }
  });

  it("Prisma's own history check accepts what applyMigrations recorded", async () => {
    const fresh = await createFreshDatabase(kind);
    try {
      const db = await fresh.open();
      await applyMigrations({ db, migrationsDir: payment.migrationsDir });
      const target: SchemaEngineTarget = fresh.url ? { databaseUrl: fresh.url } : { db };
      const status = await diagnoseMigrations({ ...payment, target });
      expect(status).toMatchObject({
        history: null,
        failedMigrationNames: [],
        editedMigrationNames: [],
        hasMigrationsTable: true,
      });
    } finally {
      await fresh.drop();
    }
  });

  it("applyMigrations sees the engine's own deploy as complete", async () => {
    const fresh = await createFreshDatabase(kind);
    try {
      const db = await fresh.open();
      const target: SchemaEngineTarget = fresh.url ? { databaseUrl: fresh.url } : { db };
      const schema = await readSchemaFiles(payment.schemaPath);
      const migrationsList = await readEngineMigrationsList(payment.migrationsDir);
      const deployed = await withSchemaEngine({ target, schema }, (engine) =>
        engine.applyMigrations({ migrationsList, filters: NO_FILTERS }),
      );
      expect(deployed.appliedMigrationNames).toEqual(['20261122000018_init']);
      await expect(applyMigrations({ db, migrationsDir: payment.migrationsDir })).resolves.toEqual({
        applied: [],
      });
      const rows = await db.query<MigrationRecord>('SELECT * FROM "_prisma_migrations"');
      expect(rows).toHaveLength(1);
    } finally {
      await fresh.drop();
    }
  });
});

// The shadow database needs a Postgres server: TEST_DATABASE_URL, else a private one, else one skip line.
describeWith(postgres)('createMigration on Postgres', () => {
  it('uses a shadow database and drops it afterwards', async () => {
    const fresh = await createFreshDatabase('postgres');
    const appDir = await copyPaymentApp();
    const paths = resolvePrismaPaths(appDir);
    await fs.appendFile(paths.schemaPath, noteModel);
    try {
      const created = await createMigration({
        ...paths,
        name: 'add_notes',
        target: { databaseUrl: fresh.url! },
      });
      expect(created?.sql).toContain('CREATE TABLE "notes"');
      const admin = new pg.Client({ connectionString: await postgresServerUrl() });
      await admin.connect();
      const shadows = await admin.query(
        "SELECT datname FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'",
      );
      await admin.end();
      expect(shadows.rows).toEqual([]);
    } finally {
      await fresh.drop();
    }
  }, 60_000);
});
