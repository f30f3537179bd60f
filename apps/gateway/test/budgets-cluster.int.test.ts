import { openDatabase } from '@platform/db';
import {
  describeWithSharedServers,
  freePort,
  type OpenAIFake,
  type PrivateServer,
  type SharedServers,
  startOpenAIFake,
  startPrivateRedis,
  startSharedServers,
} from '@platform/testing';
import { createApiKey } from '../src/api-keys/create-api-key';
import { PrismaClient } from '../src/generated/prisma/client';
import { upsertUserByEmail } from '../src/users/repo';
import { SECRET } from './support/ai-harness';
import {
  assertBuilt,
  createScratchDatabase,
  listeningPids,
  type Service,
  spawnedGatewayEnv,
  spawnService,
  until,
} from './support/spawned-gateway';

// Item 3 of issue 31 across processes: the built service with WORKERS=2 and a
// second instance (its own process) on the same Postgres and Redis, 40
// concurrent requests of 8 tokens against a 100-token daily budget. Run
// `npm run build` first.

// Postgres: TEST_DATABASE_URL (CI), else a private one started for this file;
// without one either, the file is skipped in one line.
const describeWithServers = describeWithSharedServers(
  'the budget cluster test (apps/gateway/test/budgets-cluster.int.test.ts)',
);
let servers: SharedServers | undefined;
let DATABASE_URL: string;
assertBuilt();

let openai: OpenAIFake;
let redis: PrivateServer;
let database: { url: string; drop(): Promise<void> };
const services: Service[] = [];
let ports: number[] = [];

describeWithServers('the built service', () => {
  beforeAll(async () => {
    servers = await startSharedServers();
    DATABASE_URL = servers.databaseUrl;
    openai = await startOpenAIFake();
    redis = await startPrivateRedis();
    database = await createScratchDatabase(DATABASE_URL);
    const env = {
      ...spawnedGatewayEnv({ databaseUrl: database.url, redisUrl: redis.url, openaiUrl: openai.baseURL }),
      AI_DAILY_TOKEN_BUDGET: '100',
    };
    ports = [await freePort(), await freePort()];
    const clustered = spawnService({ ...env, WORKERS: '2', PORT: String(ports[0]) });
    services.push(clustered);
    await until(() => listeningPids(clustered).length >= 2, 30_000, 'two workers');
    const single = spawnService({ ...env, WORKERS: '1', PORT: String(ports[1]) });
    services.push(single);
    await until(() => listeningPids(single).length >= 1, 30_000, 'the second instance');
  }, 60_000);

  afterAll(async () => {
    for (const svc of services) {
      try {
        process.kill(-(svc.child.pid as number), 'SIGKILL');
      } catch {}
      await svc.exited;
    }
    await database?.drop();
    await redis?.close();
    await openai?.close();
    await servers?.close();
  }, 30_000);

  it('40 concurrent requests over two workers and a second instance serve at most one answer past 100 tokens', async () => {
    const db = await openDatabase({ url: database.url });
    const prisma = new PrismaClient({ adapter: db.adapter });
    try {
      const user = await upsertUserByEmail(prisma, `budget-cluster-${Date.now()}@example.com`);
      const key = await createApiKey(
        { prisma, env: { GATEWAY_SECRET: SECRET } },
        { userId: user.id, name: 'k', scope: 'ai' },
      );
      openai.set({ usage: { prompt_tokens: 4, completion_tokens: 4 }, latencyMs: 50 });
      let served = 0;
      const statuses: number[] = [];
      for (let round = 0; round < 3; round += 1) {
        const answers = await Promise.all(
          Array.from({ length: 40 }, async (_, i) => {
            // A new connection each: the primary hands them to both workers in turn.
            const res = await fetch(`http://127.0.0.1:${ports[i % 2]}/api/v1/ai/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': key.key, connection: 'close' },
              body: JSON.stringify({
                lane: 'free',
                project_id: 'p',
                max_tokens: 4,
                messages: [{ role: 'user', content: 'hi' }],
              }),
            });
            const body = (await res.json()) as { usage?: { total_tokens: number } };
            return { status: res.status, tokens: body.usage?.total_tokens ?? 0 };
          }),
        );
        for (const a of answers) {
          statuses.push(a.status);
          if (a.status === 200) served += a.tokens;
        }
      }
      expect(new Set(statuses)).toEqual(new Set([200, 429]));
      expect(served).toBeLessThanOrEqual(100 + 8);
      expect(served).toBeGreaterThanOrEqual(100 - 8);
    } finally {
      await prisma.$disconnect();
      await db.close();
    }
  }, 60_000);
});
