import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '@platform/db';
import { testServerUrls } from '@platform/testing';
import { ROOT } from './compose';

/** A service started through its real composition root (src/main.ts), as the image does with dist/main.js. */
export type ServiceProcess = {
  name: string;
  port: number;
  /** Everything the process wrote (pino JSON lines on stdout, anything else on stderr). */
  output(): string;
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Sends a signal (SIGKILL: a crash) and waits for the exit; resolves with the exit code, null when killed. */
  kill(signal: NodeJS.Signals): Promise<number | null>;
};

/** Where a service keeps its data for one test file, as env variables, and how to drop it. */
export type ServiceStorage = { env: Record<string, string>; drop(): Promise<void> };

/**
 * A fresh database for one service: on the Postgres server `base` (default
 * TEST_DATABASE_URL) when there is one, else an embedded PGlite folder. Left empty on purpose: the service
 * applies its migrations at start, which is part of what this proves.
 */
export async function createServiceStorage(
  service: string,
  base = testServerUrls().databaseUrl,
): Promise<ServiceStorage> {
  if (!base) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `e2e-${service}-`));
    return { env: { DATA_DIR: dir }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `t_e2e_${service}_${randomBytes(5).toString('hex')}`;
  const admin = await openDatabase({ url: base });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    async drop() {
      await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.close();
    },
  };
}

type LogLine = { msg?: string; address?: { port?: number } };

function parseLine(line: string): LogLine | undefined {
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
}

/**
 * Runs `node --conditions=source --import tsx src/main.ts` in the app folder
 * with only the given environment (plus PATH), on loopback: on `opts.port`
 * (for a service whose public URL must name its port) or an OS-assigned port,
 * read back from the service's own "listening" log line.
 */
export async function startService(
  name: 'payment' | 'gateway',
  env: Record<string, string>,
  opts: { port?: number } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
    cwd: path.join(ROOT, 'apps', name),
    // One process per service (WORKERS=1) unless a test asks for workers: these tests count
    // instances, and cluster mode has its own test (apps/gateway/test/cluster.int.test.ts).
    env: {
      PATH: process.env.PATH ?? '',
      WORKERS: '1',
      // A CPU-starved machine (2 cores running jest workers, servers, Chromium) should slow
      // these tests down, not fail them: a process whose loop stalled past the product's
      // 750 ms Redis bound answered 503 (stop 52's CI). The Redis bound now waits out a late
      // loop, but only up to four bounds (packages/db/src/redis-lag-tolerant-timeout.ts),
      // and Postgres's connect bound cannot tell at all. No test here stops Redis or
      // Postgres; the fast 503s are proved in apps/*/test on the product's defaults.
      REDIS_COMMAND_TIMEOUT_MS: '10000',
      DATABASE_CONNECT_TIMEOUT_MS: '10000',
      ...env,
      HOST: '127.0.0.1',
      PORT: String(opts.port ?? 0),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const port = await new Promise<number>((resolve, reject) => {
    let pending = '';
    let settled = false;
    // tsx compiles the sources on the way in: on a loaded 2-core machine a start took over 60 s.
    const timer = setTimeout(() => fail(new Error('did not log "listening" within 150 s')), 150_000);
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name}: ${err.message}\n${output.slice(-4000)}`));
    };
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const entry = parseLine(line);
        if (!settled && entry?.msg === 'listening' && typeof entry.address?.port === 'number') {
          settled = true;
          clearTimeout(timer);
          resolve(entry.address.port);
        }
      }
    });
    child.once('exit', (code) => fail(new Error(`exited with ${code} before listening`)));
  });

  return {
    name,
    port,
    output: () => output,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}

/**
 * Fails unless `res` has `status`, saying what the service answered and what it
 * logged about that request (by the answer's request_id), so a failure in CI
 * names its cause. Reads the body only on failure.
 */
export async function expectStatus(res: Response, status: number, service?: ServiceProcess): Promise<void> {
  if (res.status === status) return;
  const body = await res.text().catch((err: unknown) => `(body unreadable: ${String(err)})`);
  const requestId = res.headers.get('x-request-id') ?? /"request_id":"([^"]+)"/.exec(body)?.[1];
  const logged =
    service && requestId
      ? service
          .output()
          .split('\n')
          .filter((line) => line.includes(requestId))
          .join('\n')
      : '';
  throw new Error(
    `${service?.name ?? 'service'} answered ${res.status}, expected ${status}: ${body.slice(0, 2000)}` +
      (logged ? `\nits log for ${requestId}:\n${logged.slice(-4000)}` : ''),
  );
}
