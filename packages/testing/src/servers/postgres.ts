import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { testServerUrls } from './env';
import type { Need, TestServer } from './need';
import type { PrivateServer } from './private-server';
import { freePort, onPath } from './process';

const run = promisify(execFile);

/** Debian/Ubuntu keep the server binaries (initdb, pg_ctl) off PATH, per major version. */
const PG_BIN_DIRS = [18, 17, 16, 15, 14].map((version) => `/usr/lib/postgresql/${version}/bin`);

function pgBin(name: string): string {
  for (const dir of PG_BIN_DIRS) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  return name;
}

/** Whether initdb and pg_ctl exist (on PATH or in Debian's versioned folder). */
export function hasPostgresServer(): boolean {
  return ['initdb', 'pg_ctl'].every((bin) => pgBin(bin) !== bin || onPath(bin));
}

/** As root, initdb refuses to run: the cluster belongs to `postgres`. */
async function ownerIds(): Promise<{ uid: number; gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/**
 * A throw-away Postgres cluster (initdb in a temp directory, trust auth, no
 * fsync). initdb refuses to run as root, so as root it runs as `postgres`.
 */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pg-test-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = await ownerIds();
    chownSync(dir, uid, gid);
  }
  const pg = (bin: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', pgBin(bin), ...args]) : run(pgBin(bin), args);
  try {
    await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  let running = false;
  const start = async () => {
    if (running) return;
    await pg('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
    running = true;
  };
  const stop = async () => {
    if (!running) return;
    await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    running = false;
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    shared: false,
    start,
    stop,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type NeedPostgresOptions = {
  /** A server of the file's own even when TEST_DATABASE_URL is set: a fault test stops it. */
  private?: boolean;
};

/**
 * A Postgres server for a test: TEST_DATABASE_URL when set (`shared`: create
 * uniquely named databases on it, e.g. createTestDatabase({ serverUrl })), else
 * a private cluster (initdb) on a free port, else the block from
 * describeWith(needPostgres()) is skipped in one line. Tests that only need a
 * database, not a server, use createTestDatabase(), which falls back to PGlite.
 */
export function needPostgres(options: NeedPostgresOptions & { private: true }): Need<PrivateServer>;
export function needPostgres(options?: NeedPostgresOptions): Need<TestServer>;
export function needPostgres(options: NeedPostgresOptions = {}): Need<TestServer> {
  const shared = options.private ? undefined : testServerUrls().databaseUrl;
  const missing =
    shared || hasPostgresServer()
      ? undefined
      : options.private
        ? 'install the PostgreSQL server (initdb, pg_ctl): it stops and starts a server of its own'
        : 'set TEST_DATABASE_URL, or install the PostgreSQL server (initdb, pg_ctl) to let it start its own';
  return {
    kind: 'Postgres',
    missing,
    start: async () =>
      shared ? { url: shared, shared: true, close: async () => {} } : startPrivatePostgres(),
  };
}
