// Interim until @platform/testing ships createTestDatabase/createTestKv: one fresh
// database per test file (Postgres when TEST_DATABASE_URL is set, else in-memory PGlite).
import { randomBytes } from 'node:crypto';
import { applyMigrations, type Database, type KeyValueStore, openDatabase } from '@platform/db';

export type TestDatabase = { db: Database; adapter: Database['adapter']; drop(): Promise<void> };

export async function createTestDatabase(options: { migrationsDir: string }): Promise<TestDatabase> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const db = await openDatabase({});
    await applyMigrations({ db, migrationsDir: options.migrationsDir });
    return { db, adapter: db.adapter, drop: () => db.close() };
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ url: base });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  await applyMigrations({ db, migrationsDir: options.migrationsDir });
  return {
    db,
    adapter: db.adapter,
    async drop() {
      await db.close();
      await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.close();
    },
  };
}

export function createTestKv(): KeyValueStore {
  const values = new Map<string, { value: string; expires: number }>();
  const live = (key: string) => {
    const entry = values.get(key);
    if (entry && entry.expires <= Date.now()) values.delete(key);
    return values.get(key);
  };
  return {
    kind: 'memory',
    get: async (key) => live(key)?.value ?? null,
    set: async (key, value, ttlMs) => {
      values.set(key, { value, expires: ttlMs ? Date.now() + ttlMs : Number.POSITIVE_INFINITY });
    },
    setIfAbsent: async (key, value, ttlMs) => {
      if (live(key)) return false;
      values.set(key, { value, expires: Date.now() + ttlMs });
      return true;
    },
    getDel: async (key) => {
      const value = live(key)?.value ?? null;
      values.delete(key);
      return value;
    },
    del: async (key) => {
      values.delete(key);
    },
    incrWindow: async (key, by, windowMs) => {
      const entry = live(key) ?? { value: '0', expires: Date.now() + windowMs };
      entry.value = String(Number(entry.value) + by);
      values.set(key, entry);
      return { total: Number(entry.value), resetMs: entry.expires - Date.now() };
    },
    publish: async () => undefined,
    subscribe: async () => async () => undefined,
    ping: async () => true,
    close: async () => undefined,
  };
}
