import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '@platform/db';
import {
  describeWithSharedServers,
  eventually,
  freePort,
  type OpenAIFake,
  parsePrometheusText,
  type SharedServers,
  startOpenAIFake,
  startSharedServers,
} from '@platform/testing';
import { createApiKey } from '../src/api-keys/create-api-key';
import { PrismaClient } from '../src/generated/prisma/client';
import { upsertUserByEmail } from '../src/users/repo';
import { baseUrlsFor, SECRET, SERVER_KEYS, TEST_LANES, writeTempJson } from './support/ai-harness';
import { parseSse } from './support/sse';

// The built service (`node dist/main.js`, as the image runs it) with WORKERS=2
// on Postgres and Redis: a node:cluster primary and two workers. Everything is
// observed from outside: the JSON lines on stdout (each carries its pid), the
// exit code, /metrics. Run `npm run build` first.

// Postgres and Redis: TEST_DATABASE_URL/TEST_REDIS_URL (CI), else private ones
// started for this file; without those either, the file is skipped in one line.
const describeWithServers = describeWithSharedServers(
  'the cluster test (apps/gateway/test/cluster.int.test.ts)',
);
let servers: SharedServers | undefined;
let DATABASE_URL: string;
let REDIS_URL: string;
const APP_DIR = path.join(__dirname, '..');
const MAIN = path.join(APP_DIR, 'dist', 'main.js');

type LogLine = {
  level: string;
  msg: string;
  pid: number;
  role?: string;
  migration?: string;
  worker_pid?: number;
  req?: { url?: string };
  [key: string]: unknown;
};

type ServiceProcess = {
  child: ChildProcess;
  port: number;
  stdout(): string;
  stderr(): string;
  /** Every complete stdout line, parsed; throws on a line that is not JSON. */
  lines(): LogLine[];
  exited: Promise<number | null>;
};

function spawnService(env: Record<string, string>, port: number): ServiceProcess {
  const child = spawn(process.execPath, ['--enable-source-maps', MAIN], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    port,
    stdout: () => out,
    stderr: () => err,
    lines: () =>
      out
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as LogLine),
    exited,
  };
}

async function waitForLines(svc: ServiceProcess, pred: (l: LogLine) => boolean, count: number, ms = 60_000) {
  const ok = await eventually(async () => svc.lines().filter(pred).length >= count, ms, 50);
  if (!ok)
    throw new Error(`timed out waiting for log lines\nstdout:\n${svc.stdout()}\nstderr:\n${svc.stderr()}`);
}

/** One request on its own connection (the primary hands each new connection to the next worker). */
function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

async function createDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_cluster_${randomBytes(5).toString('hex')}`;
  const admin = await openDatabase({ url: DATABASE_URL });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.close();
    },
  };
}

const listening = (l: LogLine) => l.msg === 'listening';
const workerPids = (svc: ServiceProcess) =>
  new Set(
    svc
      .lines()
      .filter(listening)
      .map((l) => l.pid),
  );

let openai: OpenAIFake;
let database: { url: string; drop(): Promise<void> };
let svc: ServiceProcess;
let baseEnv: Record<string, string>;
const PRIMARY_MODULES_HOOK = path.join(__dirname, 'support', 'primary-modules-hook.cjs');
const primaryModulesFile = path.join(os.tmpdir(), `primary-modules-${randomBytes(5).toString('hex')}.json`);

beforeAll(async () => {
  // `npm test` builds it first (turbo: test dependsOn build).
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  servers = await startSharedServers();
  DATABASE_URL = servers.databaseUrl;
  REDIS_URL = servers.redisUrl;
  openai = await startOpenAIFake();
  // Empty on purpose: both workers start at once and race to apply the migrations.
  database = await createDatabase();
  baseEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    GATEWAY_PUBLIC_URL: 'http://gateway.test',
    GATEWAY_SECRET: SECRET,
    AI_LANES_CONFIG: writeTempJson('lanes.json', TEST_LANES),
    AI_PROVIDER_BASE_URLS: baseUrlsFor(openai.baseURL, 'http://127.0.0.1:9'),
    ...SERVER_KEYS,
  };
  svc = spawnService(
    {
      ...baseEnv,
      WORKERS: '2',
      DATABASE_URL: database.url,
      REDIS_URL: REDIS_URL,
      NODE_OPTIONS: `--require ${PRIMARY_MODULES_HOOK}`,
      PRIMARY_MODULES_FILE: primaryModulesFile,
    },
    await freePort(),
  );
  await waitForLines(svc, listening, 2);
}, 120_000);

afterAll(async () => {
  if (svc && svc.child.exitCode === null && svc.child.signalCode === null) {
    svc.child.kill('SIGKILL');
    await svc.exited;
  }
  await database?.drop();
  await openai?.close();
  await servers?.close();
}, 60_000);

describeWithServers('WORKERS=2 with Postgres and Redis', () => {
  it('runs a primary and two workers that applied the migrations exactly once between them', () => {
    const lines = svc.lines();
    const primary = lines.find((l) => l.msg === 'starting workers');
    expect(primary).toMatchObject({ role: 'primary', pid: svc.child.pid, workers: 2 });
    const pids = workerPids(svc);
    expect(pids.size).toBe(2);
    expect(pids.has(svc.child.pid as number)).toBe(false);
    const applied = lines.filter((l) => l.msg === 'migration applied').map((l) => l.migration);
    expect(applied.length).toBeGreaterThan(0);
    expect(new Set(applied).size).toBe(applied.length);
  });

  it('serves fresh connections from both workers and sums the request counter over them', async () => {
    const N = 24;
    for (let i = 0; i < N; i++) expect((await get(svc.port, `/cluster-probe/${i}`)).status).toBe(404);
    await waitForLines(svc, (l) => l.req?.url?.startsWith('/cluster-probe/') === true, N);
    const served = svc.lines().filter((l) => l.req?.url?.startsWith('/cluster-probe/'));
    expect(new Set(served.map((l) => l.pid))).toEqual(workerPids(svc));

    const metrics = await get(svc.port, '/metrics');
    expect(metrics.status).toBe(200);
    const family = parsePrometheusText(metrics.body).find((f) => f.name === 'http_requests_total');
    const unmatched = family?.metrics.filter(
      (m) => m.labels?.route === 'unmatched' && m.labels?.status === '404' && m.labels?.method === 'GET',
    );
    // One series summed over the workers, not one per worker.
    expect(unmatched).toHaveLength(1);
    expect(Number(unmatched?.[0]?.value)).toBe(N);
  });

  it('relays /metrics through a primary that loads no prom-client (issue 46: its memory)', async () => {
    expect((await get(svc.port, '/metrics')).status).toBe(200);
    process.kill(svc.child.pid as number, 'SIGUSR2');
    expect(await eventually(async () => fs.existsSync(primaryModulesFile), 5_000, 50)).toBe(true);
    const packages = JSON.parse(fs.readFileSync(primaryModulesFile, 'utf8')) as string[];
    fs.rmSync(primaryModulesFile, { force: true });
    // The hook itself is outside node_modules; what the primary loaded from there is listed.
    expect(packages).not.toContain('prom-client');
    expect(packages).not.toContain('express');
  });

  it('keeps every stdout line whole while both workers log heavily at once', async () => {
    const before = svc.lines().length;
    // ~2.5 KB access-log lines, so nearly every 4 KiB batch is cut at a line boundary.
    const pad = 'x'.repeat(2500);
    const requests = Array.from({ length: 400 }, (_, i) => get(svc.port, `/cluster-flood/${i}?pad=${pad}`));
    await Promise.all(requests);
    await waitForLines(svc, (l) => l.req?.url?.startsWith('/cluster-flood/') === true, 400);
    // lines() parses every line; a torn line would throw here.
    const flood = svc
      .lines()
      .slice(before)
      .filter((l) => l.req?.url?.startsWith('/cluster-flood/'));
    expect(flood).toHaveLength(400);
    expect(new Set(flood.map((l) => l.pid)).size).toBe(2);
    expect(svc.stdout().endsWith('\n')).toBe(true);
  });

  it('replaces a worker killed with SIGKILL and keeps answering', async () => {
    const [victim, survivor] = [...workerPids(svc)];
    process.kill(victim as number, 'SIGKILL');
    await waitForLines(
      svc,
      (l) => l.msg === 'worker exited; starting a replacement' && l.worker_pid === victim,
      1,
    );
    const died = svc.lines().find((l) => l.worker_pid === victim);
    expect(died).toMatchObject({ level: 'error', role: 'primary', signal: 'SIGKILL' });
    await waitForLines(svc, listening, 3);
    const replacement = [...workerPids(svc)].find((p) => p !== victim && p !== survivor);
    expect(replacement).toBeDefined();
    for (let i = 0; i < 8; i++) expect((await get(svc.port, `/cluster-after-kill/${i}`)).status).toBe(404);
    await waitForLines(svc, (l) => l.req?.url?.startsWith('/cluster-after-kill/') === true, 8);
    const served = svc.lines().filter((l) => l.req?.url?.startsWith('/cluster-after-kill/'));
    expect(new Set(served.map((l) => l.pid))).toEqual(new Set([survivor, replacement]));
  });

  it('on SIGTERM lets an open stream finish, then the primary exits 0', async () => {
    const db = await openDatabase({ url: database.url });
    const prisma = new PrismaClient({ adapter: db.adapter });
    const user = await upsertUserByEmail(prisma, `cluster-${Date.now()}@example.com`);
    const key = await createApiKey(
      { prisma, env: { GATEWAY_SECRET: SECRET } },
      { userId: user.id, name: 'k', scope: 'ai' },
    );
    await prisma.$disconnect();
    await db.close();

    // Two chunks 1.5 s apart: the second one comes after SIGTERM, well within the drain time.
    openai.setFor('free-a', { chunks: ['first ', 'second'], chunkDelayMs: 1500 });
    const res = await fetch(`http://127.0.0.1:${svc.port}/api/v1/ai/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ lane: 'free', project_id: 'p1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('first ');

    svc.child.kill('SIGTERM');
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      text += new TextDecoder().decode(next.value);
    }
    expect(text).toContain('second');
    expect(parseSse(text).events.some((e) => e.event === 'error')).toBe(false);
    expect(await svc.exited).toBe(0);
    const lines = svc.lines();
    expect(lines.filter((l) => l.msg === 'stopped')).toHaveLength(2);
    expect(lines.at(-1)).toMatchObject({ role: 'primary', msg: 'all workers stopped' });
  }, 30_000);
});

describeWithServers('process layout from the environment', () => {
  it('runs one process and warns once in embedded mode, whatever WORKERS says', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-cluster-embedded-'));
    const single = spawnService({ ...baseEnv, WORKERS: '2', DATA_DIR: dataDir }, await freePort());
    try {
      // A fresh embedded database is created and migrated first: over 30 s on a loaded 2-core machine.
      await waitForLines(single, listening, 1);
      const lines = single.lines();
      expect(lines.find(listening)?.pid).toBe(single.child.pid);
      const warnings = lines.filter((l) => l.msg.includes('WORKERS'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 'warn' });
      expect(warnings[0]?.msg).toContain('DATABASE_URL and REDIS_URL are not set');
      expect(lines.some((l) => l.role === 'primary' && l.msg === 'starting workers')).toBe(false);
      expect((await get(single.port, '/health')).status).toBe(200);
      single.child.kill('SIGTERM');
      expect(await single.exited).toBe(0);
    } finally {
      single.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('refuses an invalid WORKERS with one line and exit 1', async () => {
    const bad = spawnService(
      { ...baseEnv, WORKERS: 'many', DATABASE_URL: database.url, REDIS_URL: REDIS_URL },
      await freePort(),
    );
    expect(await bad.exited).toBe(1);
    expect(bad.stderr()).toBe('gateway: failed to start: WORKERS must be "auto" or a positive integer\n');
    expect(bad.stdout()).toBe('');
  });

  it("exits 1 with the workers' one-line reason when every first worker fails to start", async () => {
    const missing = new URL(database.url);
    missing.pathname = `/t_cluster_missing_${randomBytes(4).toString('hex')}`;
    const failing = spawnService(
      { ...baseEnv, WORKERS: '2', DATABASE_URL: missing.toString(), REDIS_URL: REDIS_URL },
      await freePort(),
    );
    expect(await failing.exited).toBe(1);
    const errLines = failing.stderr().trimEnd().split('\n');
    expect(errLines).toHaveLength(1);
    expect(errLines[0]).toMatch(/^gateway: failed to start: /);
  }, 30_000);
});
