import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, loadPristineSnapshot, openDatabase } from '../src';

/** A fresh empty database for one test: Postgres when TEST_DATABASE_URL is set, else PGlite in memory. */
export type FreshDatabase = {
  kind: 'postgres' | 'pglite';
  url?: string;
  open(): Promise<Database>;
  drop(): Promise<void>;
};

export const serverUrl = process.env.TEST_DATABASE_URL;

/** Backends to run a suite against: always PGlite, plus Postgres when a server is configured. */
export const backends: ('pglite' | 'postgres')[] = serverUrl ? ['pglite', 'postgres'] : ['pglite'];

export async function createFreshDatabase(kind: 'postgres' | 'pglite'): Promise<FreshDatabase> {
  if (kind === 'pglite' || !serverUrl) {
    let db: Database | undefined;
    // One shared in-memory instance: a second open() returns the same database.
    return {
      kind: 'pglite',
      open: async () => {
        db ??= await openDatabase({ snapshot: await loadPristineSnapshot() });
        return db;
      },
      drop: async () => db?.close(),
    };
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const opened: Database[] = [];
  return {
    kind: 'postgres',
    url: url.toString(),
    open: async () => {
      const db = await openDatabase({ url: url.toString() });
      opened.push(db);
      return db;
    },
    drop: async () => {
      await Promise.all(opened.map((db) => db.close()));
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  };
}
