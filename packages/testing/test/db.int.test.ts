import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../src/db';
import { perTestFile } from '../src/per-file';
import { describeWith, needPostgres } from '../src/servers';

const migrationsDir = path.resolve(__dirname, '../../../apps/payment/prisma/migrations');
// Postgres: TEST_DATABASE_URL (CI), else a private server for this file, else one skip line.
const postgres = needPostgres();

async function tableNames(test: TestDatabase): Promise<string[]> {
  const rows = await test.db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
  );
  return rows.map((r) => r.name);
}

describeWith(postgres)('on Postgres and PGlite', () => {
  const server = perTestFile(postgres.start);
  const kinds: { kind: string; serverUrl: () => string | null }[] = [
    { kind: 'pglite', serverUrl: () => null },
    { kind: 'postgres', serverUrl: () => server.url },
  ];

  describe.each(kinds)('createTestDatabase on $kind', ({ kind, serverUrl: serverOf }) => {
    it('gives each caller its own migrated database', async () => {
      const serverUrl = serverOf();
      const [a, b] = await Promise.all([
        createTestDatabase({ migrationsDir, serverUrl }),
        createTestDatabase({ migrationsDir, serverUrl }),
      ]);
      try {
        expect(a.kind).toBe(kind);
        expect(await tableNames(a)).toContain('customers');
        const [migration] = await a.db.query('SELECT migration_name FROM "_prisma_migrations"');
        expect(migration).toEqual({ migration_name: '20261122000018_init' });
        await a.db.exec(
          `INSERT INTO webhook_events (id, type, stripe_created_at) VALUES ('evt_1', 't', now())`,
        );
        expect(await b.db.query('SELECT id FROM webhook_events')).toEqual([]);
      } finally {
        await Promise.all([a.drop(), b.drop()]);
      }
    });
  });

  it('copies a template named after the migrations, so a changed folder gets a new one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    cpSync(migrationsDir, dir, { recursive: true });
    const first = await createTestDatabase({ migrationsDir: dir, serverUrl: server.url });
    await first.drop();
    mkdirSync(path.join(dir, '29990101000000_probe'));
    writeFileSync(
      path.join(dir, '29990101000000_probe', 'migration.sql'),
      'CREATE TABLE template_probe (id int);',
    );
    const second = await createTestDatabase({ migrationsDir: dir, serverUrl: server.url });
    try {
      expect(await tableNames(second)).toContain('template_probe');
      const migrations = await second.db.query<{ name: string }>(
        'SELECT migration_name AS name FROM "_prisma_migrations" ORDER BY 1 DESC LIMIT 1',
      );
      expect(migrations).toEqual([{ name: '29990101000000_probe' }]);
    } finally {
      await second.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a Postgres test database is reachable by its url and gone after drop', async () => {
    const test = await createTestDatabase({ migrationsDir, serverUrl: server.url });
    const name = new URL(test.url!).pathname.slice(1);
    expect(name).toMatch(/^t_[0-9a-f]{16}$/);
    const client = new pg.Client({ connectionString: test.url });
    // Left open on purpose: drop() must succeed anyway, and terminates it.
    client.on('error', () => undefined);
    await client.connect();
    expect((await client.query('SELECT count(*)::int AS n FROM customers')).rows).toEqual([{ n: 0 }]);
    await test.drop();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rows).toEqual([]);
    } finally {
      await admin.end();
      await client.end().catch(() => undefined);
    }
  });
});
