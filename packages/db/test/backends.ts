import { randomBytes } from 'node:crypto';
// @platform/testing depends on this package, so it is not a declared dependency
// here (turbo would see a cycle); its ./servers entry imports nothing of it.
import { needPostgres, needsMet, type TestServer } from '@platform/testing/servers';
import pg from 'pg';
import { type Database, loadPristineSnapshot, openDatabase } from '../src';

/** A fresh empty database for one test: on the Postgres server, or PGlite in memory. */
export type FreshDatabase = {
  kind: 'postgres' | 'pglite';
  url?: string;
  open(): Promise<Database>;
  drop(): Promise<void>;
};

/** The Postgres server: TEST_DATABASE_URL, else a private one (initdb) started when first used. */
export const postgres = needPostgres();

/** Backends to run a suite against: PGlite, and Postgres where there is one (else one skip line). */
export const backends: ('pglite' | 'postgres')[] = needsMet(postgres) ? ['pglite', 'postgres'] : ['pglite'];

let server: Promise<TestServer> | undefined;
// Registered by the test file that imports this one: its private server goes with its last test.
afterAll(async () => {
  await (await server)?.close();
});

/** The Postgres server's URL (tests create their own databases on it). */
export async function postgresServerUrl(): Promise<string> {
  server ??= postgres.start();
  return (await server).url;
}

export async function createFreshDatabase(kind: 'postgres' | 'pglite'): Promise<FreshDatabase> {
  if (kind === 'pglite') {
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
  const serverUrl = await postgresServerUrl();
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
