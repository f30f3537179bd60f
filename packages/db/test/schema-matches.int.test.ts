import path from 'node:path';
import { applyMigrations, diffDatabaseToSchema, resolvePrismaPaths, type SchemaEngineTarget } from '../src';
import { backends, createFreshDatabase } from './backends';

// The committed migrations of every app must produce exactly its schema.prisma:
// after applying them to an empty database, the schema engine finds nothing to change.
const apps = ['payment', 'gateway'].map((name) => ({
  name,
  ...resolvePrismaPaths(path.resolve(__dirname, '../../../apps', name)),
}));

describe.each(backends)('migrations match schema.prisma on %s', (kind) => {
  it.each(apps)('$name: the migrated database has no diff to its schema', async (app) => {
    const fresh = await createFreshDatabase(kind);
    try {
      const db = await fresh.open();
      const { applied } = await applyMigrations({ db, migrationsDir: app.migrationsDir });
      expect(applied.length).toBeGreaterThan(0);
      const target: SchemaEngineTarget = fresh.url ? { databaseUrl: fresh.url } : { db };
      expect(await diffDatabaseToSchema({ ...target, schemaPath: app.schemaPath })).toBe('');
    } finally {
      await fresh.drop();
    }
  });
});
