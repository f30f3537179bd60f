import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src';
import { backends, createFreshDatabase, type FreshDatabase } from './backends';

describe('openDatabase with a PGlite data folder', () => {
  it('creates the folder and keeps the data across reopen', async () => {
    const dataDir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'pglite-')), 'nested', 'data');
    const first = await openDatabase({ dataDir });
    expect(first.kind).toBe('pglite');
    await first.exec('CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ($$hello$$);');
    await first.close();
    await first.close();

    const second = await openDatabase({ dataDir });
    try {
      expect(await second.query('SELECT v FROM kept')).toEqual([{ v: 'hello' }]);
    } finally {
      await second.close();
    }
  });
});

describe.each(backends)('openDatabase on %s', (kind) => {
  let fresh: FreshDatabase;
  beforeEach(async () => {
    fresh = await createFreshDatabase(kind);
  });
  afterEach(async () => {
    await fresh.drop();
  });

  it('Prisma adapter and raw queries see the same database', async () => {
    const db = await fresh.open();
    expect(db.kind).toBe(kind);
    await db.exec('CREATE TABLE shared (id INT PRIMARY KEY); INSERT INTO shared VALUES (1), (2);');
    const driver = await db.adapter.connect();
    const result = await driver.queryRaw({
      sql: 'SELECT count(*)::int AS n FROM shared',
      args: [],
      argTypes: [],
    });
    expect(result.rows).toEqual([[2]]);
    await driver.dispose();
  });

  it('copyFrom loads text-format rows, escapes and nulls included, all or none', async () => {
    const db = await fresh.open();
    await db.exec('CREATE TABLE c (id INT PRIMARY KEY, v TEXT)');
    const sql = 'COPY c (id, v) FROM STDIN';
    await db.copyFrom(sql, '1\ttab\\there\n2\t\\N\n3\tline\\nbreak \\\\ back\n');
    expect(await db.query('SELECT id, v FROM c ORDER BY id')).toEqual([
      { id: 1, v: 'tab\there' },
      { id: 2, v: null },
      { id: 3, v: 'line\nbreak \\ back' },
    ]);
    // A duplicate key in the second row: the statement fails and keeps none of its rows.
    await expect(db.copyFrom(sql, '4\tnew\n1\tagain\n')).rejects.toThrow(/duplicate key/);
    expect(await db.query('SELECT count(*)::int AS n FROM c')).toEqual([{ n: 3 }]);
    // The pool (or PGlite) is usable after the failed COPY.
    await db.copyFrom(sql, '4\tnew\n');
    expect(await db.query('SELECT v FROM c WHERE id = 4')).toEqual([{ v: 'new' }]);
  });

  it('query takes parameters', async () => {
    const db = await fresh.open();
    expect(await db.query('SELECT $1::int + $2::int AS sum', [2, 3])).toEqual([{ sum: 5 }]);
  });

  it('execute says how many rows a write affected, on the pool and in a transaction', async () => {
    const db = await fresh.open();
    await db.exec('CREATE TABLE e (id INT PRIMARY KEY, v TEXT)');
    expect(await db.execute('INSERT INTO e VALUES (1, $1), (2, $1), (3, $2)', ['a', 'b'])).toBe(3);
    expect(await db.execute('UPDATE e SET v = $1 WHERE v = $2', ['c', 'a'])).toBe(2);
    expect(await db.transaction((tx) => tx.execute('DELETE FROM e WHERE id > $1', [1]))).toBe(2);
    expect(await db.execute('DELETE FROM e WHERE id = $1', [99])).toBe(0);
    expect(await db.query('SELECT id, v FROM e')).toEqual([{ id: 1, v: 'c' }]);
  });

  it('a raw transaction rolls back when its function throws', async () => {
    const db = await fresh.open();
    await db.exec('CREATE TABLE t (v TEXT)');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES ($1)', ['x']);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await db.query('SELECT * FROM t')).toEqual([]);
  });

  it('Prisma queries issued during a raw transaction do not run inside it', async () => {
    const db = await fresh.open();
    await db.exec('CREATE TABLE t (v TEXT)');
    const driver = await db.adapter.connect();
    let seen: unknown[][] | undefined;
    await db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES ($1)', ['uncommitted']);
        const during = driver.queryRaw({ sql: 'SELECT v FROM t', args: [], argTypes: [] });
        // On PGlite the adapter's query waits for this transaction; on Postgres it uses another connection.
        if (kind === 'postgres') seen = (await during).rows;
        else void during.then((r) => (seen = r.rows));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await db.query('SELECT 1');
    expect(seen).toEqual([]);
    await driver.dispose();
  });

  it('a session keeps one connection, and a failed session gives its locks back', async () => {
    const db = await fresh.open();
    await db.withSession(async (session) => {
      const [a] = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const [b] = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(a?.pid).toBe(b?.pid);
    });
    await expect(
      db.withSession(async (session) => {
        await session.query('SELECT pg_advisory_lock(4242)');
        throw new Error('crash while holding the lock');
      }),
    ).rejects.toThrow('crash');
    const other = await fresh.open();
    const [row] = await other.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(4242) AS locked');
    expect(row?.locked).toBe(true);
    await other.query('SELECT pg_advisory_unlock(4242)');
  });
});
