import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './fault-load';

const run = promisify(execFile);

/**
 * A Redis or Postgres server that one test file owns, on its own port and data
 * directory, so a fault test can stop and restart it without touching the shared
 * servers other tests use.
 */
export type PrivateServer = {
  url: string;
  port: number;
  /** Stops the server (connections are refused until start()). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  close(): Promise<void>;
};

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  if (!(await eventually(check, timeoutMs, 50)))
    throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** `redis-server` on a free port, without persistence. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child && child.exitCode === null) return;
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = proc;
    await waitFor(() => canConnect(port), `redis-server on ${port}`);
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop, close: stop };
}

/** Debian/Ubuntu keep the server binaries (initdb, pg_ctl) off PATH, per major version. */
const PG_BIN_DIRS = [17, 16, 15, 14].map((version) => `/usr/lib/postgresql/${version}/bin`);

function pgBin(name: string): string {
  for (const dir of PG_BIN_DIRS) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  return name;
}

/**
 * A throw-away Postgres cluster (initdb in a temp directory, trust auth, no
 * fsync). initdb refuses to run as root, so as root it runs as `postgres`.
 */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pg-fault-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (bin: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', pgBin(bin), ...args]) : run(pgBin(bin), args);
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
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
    start,
    stop,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether an executable of that name is on PATH. */
export function onPath(name: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir !== '' && existsSync(path.join(dir, name)));
}

function hasPgServer(): boolean {
  return ['initdb', 'pg_ctl'].every((bin) => pgBin(bin) !== bin || onPath(bin));
}

/**
 * Postgres and Redis for a test that needs real, shared-capable servers (several
 * processes on one database and one Redis). Taken from TEST_DATABASE_URL and
 * TEST_REDIS_URL when set (CI), else started privately for the test file.
 */
export type SharedServers = {
  /** A server URL: tests create their own databases on it. */
  databaseUrl: string;
  redisUrl: string;
  /** Stops what was started privately; leaves TEST_* servers alone. */
  close(): Promise<void>;
};

/**
 * Why a test needing Postgres and Redis cannot run here, or undefined when it can
 * (TEST_* set, or the server binaries installed for startSharedServers).
 */
export function sharedServersMissing(): string | undefined {
  const missing: string[] = [];
  if (!process.env.TEST_DATABASE_URL && !hasPgServer()) missing.push('initdb and pg_ctl (postgresql)');
  if (!process.env.TEST_REDIS_URL && !onPath('redis-server')) missing.push('redis-server');
  if (missing.length === 0) return undefined;
  return `needs Postgres and Redis: set TEST_DATABASE_URL and TEST_REDIS_URL, or install ${missing.join(' and ')} to let it start its own`;
}

/**
 * `describe` when sharedServersMissing() has nothing to say, else `describe.skip`
 * after ONE line on stderr naming the test and what it needs.
 */
export function describeWithSharedServers(what: string): jest.Describe {
  return describeUnless(sharedServersMissing(), what);
}

/**
 * `describe`, or, when `missing` says what the machine lacks, `describe.skip`
 * after ONE line on stderr: `skipped: <what> <missing>`. Under CI (CI set) a
 * missing tool fails the suite instead, so CI never passes by skipping.
 */
export function describeUnless(missing: string | undefined, what: string): jest.Describe {
  if (!missing) return describe;
  if (process.env.CI) throw new Error(`${what} ${missing}`);
  process.stderr.write(`skipped: ${what} ${missing}\n`);
  return describe.skip;
}

/** TEST_DATABASE_URL/TEST_REDIS_URL, or a private Postgres and Redis on free ports. */
export async function startSharedServers(): Promise<SharedServers> {
  const [redis, postgres] = await Promise.allSettled([
    process.env.TEST_REDIS_URL ? undefined : startPrivateRedis(),
    process.env.TEST_DATABASE_URL ? undefined : startPrivatePostgres(),
  ]);
  const started = [redis, postgres].flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const close = async () => {
    await Promise.all(started.map((s) => s.close()));
  };
  for (const result of [redis, postgres]) {
    if (result.status === 'rejected') {
      await close();
      throw result.reason;
    }
  }
  const urlOf = (r: typeof redis) => (r.status === 'fulfilled' ? r.value?.url : undefined);
  return {
    redisUrl: process.env.TEST_REDIS_URL ?? (urlOf(redis) as string),
    databaseUrl: process.env.TEST_DATABASE_URL ?? (urlOf(postgres) as string),
    close,
  };
}
