import { setTimeout as sleep } from 'node:timers/promises';
import type { TestDatabase } from '@platform/testing';

/** Cumulative counters of one database from pg_stat_database. */
export type DbCounters = {
  xactCommit: number;
  xactRollback: number;
  tupInserted: number;
  tupUpdated: number;
  tupDeleted: number;
};

type StatRow = {
  xact_commit: string | number;
  xact_rollback: string | number;
  tup_inserted: string | number;
  tup_updated: string | number;
  tup_deleted: string | number;
};

const FIELDS: Array<[keyof DbCounters, keyof StatRow]> = [
  ['xactCommit', 'xact_commit'],
  ['xactRollback', 'xact_rollback'],
  ['tupInserted', 'tup_inserted'],
  ['tupUpdated', 'tup_updated'],
  ['tupDeleted', 'tup_deleted'],
];

/** pg's default pool size; every pooled connection must run once to flush its statistics. */
const POOL_SIZE = 10;

/**
 * Makes every pooled backend flush its pending statistics. A Postgres 15
 * backend flushes when it goes idle, at most once a second, and skips the
 * flush when another backend holds the database's stats entry (then it may
 * wait ten seconds). So: hold all pool connections, then run one query on
 * each in turn, never two at once.
 */
async function flushPoolStatistics(database: TestDatabase): Promise<void> {
  let arrived = 0;
  let openGate = () => {};
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  let turn = Promise.resolve();
  await Promise.all(
    Array.from({ length: POOL_SIZE }, () =>
      database.db.withSession(async (session) => {
        arrived += 1;
        if (arrived === POOL_SIZE) openGate();
        await gate;
        const mine = turn.then(async () => {
          await session.query('SELECT 1');
        });
        turn = mine;
        await mine;
      }),
    ),
  );
}

/**
 * Reads the database's counters: waits a second so every backend may flush
 * again, flushes them one by one, then reads. The probe's own transactions are
 * measured once by calibrateDbProbe() and subtracted.
 */
export async function readDbCounters(database: TestDatabase): Promise<DbCounters | null> {
  if (database.kind !== 'postgres') return null;
  await sleep(1100);
  await flushPoolStatistics(database);
  const [row] = await database.db.query<StatRow>(
    'SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()',
  );
  if (!row) return null;
  const counters = {} as DbCounters;
  for (const [key, column] of FIELDS) counters[key] = Number(row[column]);
  return counters;
}

export function diffCounters(after: DbCounters, before: DbCounters, overhead?: DbCounters): DbCounters {
  const diff = {} as DbCounters;
  for (const [key] of FIELDS) diff[key] = after[key] - before[key] - (overhead?.[key] ?? 0);
  return diff;
}

/** Counters one readDbCounters() adds by itself, measured on an idle database. */
export async function calibrateDbProbe(database: TestDatabase): Promise<DbCounters | null> {
  const first = await readDbCounters(database);
  const second = await readDbCounters(database);
  return first && second ? diffCounters(second, first) : null;
}
