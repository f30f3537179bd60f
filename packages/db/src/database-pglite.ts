import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { DbSession, OpenDatabaseOptions, PgliteDatabase, Row, SqlRunner } from './database-types';

function createRunner(client: PGlite | Transaction): SqlRunner {
  return {
    async query<T extends Row = Row>(sql: string, params?: unknown[]) {
      const result = await client.query<T>(sql, params);
      return result.rows;
    },
    async execute(sql: string, params?: unknown[]) {
      return (await client.query(sql, params)).affectedRows ?? 0;
    },
    async exec(sql: string) {
      await client.exec(sql);
    },
    async copyFrom(sql: string, data: string) {
      // PGlite reads COPY input from the virtual file /dev/blob instead of the wire.
      const fromBlob = sql.replace(/FROM STDIN/i, "FROM '/dev/blob'");
      await client.query(fromBlob, [], { blob: new Blob([data]) });
    },
  };
}

/** Serialises async sections; PGlite has one connection, so a "session" must be exclusive. */
function createMutex() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * PGlite (its JavaScript alone ~0.5 MB of source kept in the heap) loads with
 * the first embedded database: a service on Postgres never needs it, yet
 * imports this module through the package's index (issue 46).
 */
function pgliteClass(): typeof PGlite {
  return (require('@electric-sql/pglite') as typeof import('@electric-sql/pglite')).PGlite;
}

/** PGlite's package version (part of the name of a cached snapshot: a new PGlite may not read an old one). */
export function pgliteVersion(): string {
  const entry = require.resolve('@electric-sql/pglite');
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
  }
  throw new Error('PGlite package.json not found');
}

let pristine: Promise<Blob> | undefined;

/**
 * A snapshot of a new, empty cluster, made once per process: opening an
 * in-memory database from it skips initdb, which is most of PGlite's start time.
 */
export function loadPristineSnapshot(): Promise<Blob> {
  pristine ??= (async () => {
    const PGliteClass = pgliteClass();
    const pglite = new PGliteClass();
    try {
      await pglite.waitReady;
      return await pglite.dumpDataDir('none');
    } finally {
      await pglite.close();
    }
  })().catch((err: unknown) => {
    pristine = undefined;
    throw err;
  });
  return pristine;
}

/**
 * Embedded Postgres (PGlite) persisted in dataDir, or in memory without one.
 * Prisma's adapter and raw SQL share the one PGlite instance; PGlite queues every
 * query behind an open transaction, so both can be used concurrently.
 */
export async function openPglite(options: OpenDatabaseOptions): Promise<PgliteDatabase> {
  const { dataDir, logger } = options;
  if (dataDir) await fs.mkdir(dataDir, { recursive: true });
  const PGliteClass = pgliteClass();
  const pglite = dataDir
    ? new PGliteClass(dataDir)
    : new PGliteClass(options.snapshot ? { loadDataDir: options.snapshot } : undefined);
  await pglite.waitReady;
  logger?.info({ dataDir: dataDir ?? 'memory' }, 'embedded PGlite database opened (single process only)');
  const { PrismaPGlite } = require('pglite-prisma-adapter') as typeof import('pglite-prisma-adapter');
  const adapter = new PrismaPGlite(pglite);
  const exclusive = createMutex();
  const transaction = <T>(fn: (tx: SqlRunner) => Promise<T>) =>
    pglite.transaction((tx) => fn(createRunner(tx)));
  const session: DbSession = { ...createRunner(pglite), transaction };
  let closed = false;

  return {
    kind: 'pglite',
    adapter,
    ...createRunner(pglite),
    withSession: (fn) => exclusive(() => fn(session)),
    transaction,
    snapshot: () => pglite.dumpDataDir('none'),
    async close() {
      if (closed) return;
      closed = true;
      await pglite.close();
    },
  };
}
