import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '@platform/db';
import {
  describeWithSharedServers,
  type OpenAIFake,
  type PrivateServer,
  type SharedServers,
  startOpenAIFake,
  startPrivateRedis,
  startSharedServers,
} from '@platform/testing';
import { createApiKey } from '../../src/api-keys/create-api-key';
import { PrismaClient } from '../../src/generated/prisma/client';
import { upsertUserByEmail } from '../../src/users/repo';
import { baseUrlsFor, SECRET, SERVER_KEYS, TEST_LANES, writeTempJson } from './ai-harness';

/** The built service (`node dist/main.js`), for tests that kill or cluster it. Run `npm run build` first. */
const APP_DIR = path.join(__dirname, '..', '..');
const MAIN = path.join(APP_DIR, 'dist', 'main.js');

function assertBuilt(): void {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
}

export type Service = {
  child: ChildProcess;
  lines(): { msg: string; pid: number }[];
  output(): string;
  exited: Promise<unknown>;
};

export function spawnService(env: Record<string, string>): Service {
  // Its own process group, so the whole service (primary and workers) can be killed at once.
  const child = spawn(process.execPath, [MAIN], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  let err = '';
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    exited,
    output: () => `stdout:\n${out.slice(-3000)}\nstderr:\n${err.slice(-3000)}`,
    lines: () =>
      out
        .split('\n')
        .slice(0, -1)
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as { msg: string; pid: number }];
          } catch {
            return [];
          }
        }),
  };
}

export async function until(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const listeningPids = (svc: Service) =>
  svc
    .lines()
    .filter((l) => l.msg === 'listening')
    .map((l) => l.pid);

/** A fresh database on the shared Postgres server; `drop` removes it. */
async function createScratchDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_gw_${randomBytes(5).toString('hex')}`;
  const admin = await openDatabase({ url: serverUrl });
  await admin.exec(`CREATE DATABASE "${name}"`);
  await admin.close();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = await openDatabase({ url: serverUrl });
      await a.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.close();
    },
  };
}

/**
 * What a spawned gateway needs on these stores, in front of the OpenAI fake
 * (ElevenLabs closed), with the request rate out of reach. Add PORT, WORKERS
 * and what the test is about.
 */
function spawnedGatewayEnv(stores: {
  databaseUrl: string;
  redisUrl: string;
  openaiUrl: string;
}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: stores.databaseUrl,
    REDIS_URL: stores.redisUrl,
    GATEWAY_PUBLIC_URL: 'http://gateway.test',
    GATEWAY_SECRET: SECRET,
    AI_LANES_CONFIG: writeTempJson('lanes.json', TEST_LANES),
    AI_PROVIDER_BASE_URLS: baseUrlsFor(stores.openaiUrl, 'http://127.0.0.1:9'),
    AI_RATE_LIMIT_PER_MINUTE: '1000000',
    ...SERVER_KEYS,
  };
}

/** What a spawned-gateway suite runs against; filled in before its tests. */
export type SpawnedGatewayStores = {
  openai: OpenAIFake;
  /** Private: a test may stop it. */
  redis: PrivateServer;
  database: { url: string; drop(): Promise<void> };
  /** spawnedGatewayEnv of these stores; add PORT, WORKERS and what the test is about. */
  env: Record<string, string>;
  /** Every service the suite spawns: killed (whole process group) after its tests. */
  services: Service[];
};

/**
 * A describe block for tests of the built service: before its tests, Postgres
 * (TEST_DATABASE_URL, else a private server; without either the file is
 * skipped in one line naming `file`), the OpenAI fake, a private Redis and a
 * scratch database; after them, every service in `services` killed and the
 * stores closed.
 */
export function describeSpawnedGateway(
  file: string,
  title: string,
  body: (stores: SpawnedGatewayStores) => void,
): void {
  assertBuilt();
  const stores = { services: [] as Service[] } as SpawnedGatewayStores;
  let servers: SharedServers | undefined;
  describeWithSharedServers(file)(title, () => {
    beforeAll(async () => {
      servers = await startSharedServers();
      stores.openai = await startOpenAIFake();
      stores.redis = await startPrivateRedis();
      stores.database = await createScratchDatabase(servers.databaseUrl);
      stores.env = spawnedGatewayEnv({
        databaseUrl: stores.database.url,
        redisUrl: stores.redis.url,
        openaiUrl: stores.openai.baseURL,
      });
    }, 30_000);

    afterAll(async () => {
      for (const svc of stores.services) {
        if (svc.child.exitCode !== null || svc.child.signalCode !== null) continue;
        try {
          process.kill(-(svc.child.pid as number), 'SIGKILL');
        } catch {}
        await svc.exited;
      }
      await stores.database?.drop();
      await stores.redis?.close();
      await stores.openai?.close();
      await servers?.close();
    }, 30_000);

    body(stores);
  });
}

/**
 * Runs `use` with a client of `databaseUrl` and a new user (`<prefix>-<time>@example.com`)
 * holding an AI key; the client is closed afterwards.
 */
export async function withUserAndKey<T>(
  databaseUrl: string,
  prefix: string,
  use: (ctx: { prisma: PrismaClient; userId: string; apiKey: string }) => Promise<T>,
): Promise<T> {
  const db = await openDatabase({ url: databaseUrl });
  const prisma = new PrismaClient({ adapter: db.adapter });
  try {
    const user = await upsertUserByEmail(prisma, `${prefix}-${Date.now()}@example.com`);
    const key = await createApiKey(
      { prisma, env: { GATEWAY_SECRET: SECRET } },
      { userId: user.id, name: 'k', scope: 'ai' },
    );
    return await use({ prisma, userId: user.id, apiKey: key.key });
  } finally {
    await prisma.$disconnect();
    await db.close();
  }
}
