import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger, createMemoryDestination } from '@platform/logging';
import {
  describeWith,
  eventually,
  freePort,
  needPrivateStorage,
  needRedis,
  type PrivateStorage,
} from '@platform/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { assertRedisKeepsMoney, readRedisMoneySettings } from '../src/usage/redis-keeps-money';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';

/**
 * Issue 39, item 6: Redis that keeps money. Redis holds the only copy of the
 * ledger's backlog and of the budget counters: a production start refuses
 * one without AOF or with an evicting policy (naming the setting) unless
 * REDIS_PERSISTENCE_MANAGED says so, and a budget counter that a Redis
 * restart lost is rebuilt from the daily sums before it admits anything.
 */
const privateRedis = needRedis({ private: true });

/** redis-server on a free port with extra arguments; stopped by the returned function. */
async function spawnRedis(args: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  // Its files (the AOF once appendonly is set) go to a folder of its own.
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-money-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...args],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  await eventually(async () => (await probe.ping()) === 'PONG', 10_000, 50);
  probe.disconnect();
  return {
    url,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeWith(privateRedis)('the production start checks its Redis', () => {
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'gateway', destination: logs });

  it('refuses a Redis without AOF or with an evicting policy, naming the setting, unless managed', async () => {
    const server = await spawnRedis(['--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
    const redis = new Redis(server.url);
    try {
      await expect(assertRedisKeepsMoney(redis, { managed: false, logger })).rejects.toThrow(
        /appendonly is no \(needs yes/,
      );
      await redis.config('SET', 'appendonly', 'yes');
      await expect(assertRedisKeepsMoney(redis, { managed: false, logger })).resolves.toBeUndefined();
      await redis.config('SET', 'maxmemory-policy', 'volatile-lru');
      await expect(assertRedisKeepsMoney(redis, { managed: false, logger })).rejects.toThrow(
        /maxmemory-policy is volatile-lru \(needs noeviction/,
      );
      await expect(assertRedisKeepsMoney(redis, { managed: true, logger })).resolves.toBeUndefined();
      expect(logs.lines.some((l) => l.includes('REDIS_PERSISTENCE_MANAGED=true'))).toBe(true);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });

  it('reads INFO where a managed Redis disables CONFIG', async () => {
    const server = await spawnRedis([
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'allkeys-lru',
      '--rename-command',
      'CONFIG',
      '',
    ]);
    const redis = new Redis(server.url);
    try {
      expect(await readRedisMoneySettings(redis)).toEqual({
        appendonly: 'no',
        maxmemoryPolicy: 'allkeys-lru',
        source: 'INFO',
      });
      await expect(assertRedisKeepsMoney(redis, { managed: false, logger })).rejects.toThrow(
        /appendonly is no .*maxmemory-policy is allkeys-lru .*\(read with INFO\)/,
      );
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});

const privateStorage = needPrivateStorage();

describeWith(privateStorage)('a Redis restart without AOF', () => {
  let storage: PrivateStorage;
  let h: AiHarness;
  let caller: TestCaller;
  const LIMIT = 100;
  const PER_ANSWER = 8;

  beforeAll(async () => {
    storage = await privateStorage.start();
    h = await startAiHarness(
      { AI_RATE_LIMIT_PER_MINUTE: '100000', AI_DAILY_TOKEN_BUDGET: String(LIMIT) },
      storage.urls,
    );
    caller = await h.createCaller();
  }, 30_000);
  afterAll(() => storage?.close(async () => h?.close()), 30_000);

  const chat = () =>
    request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send({
        lane: 'free',
        project_id: 'restart',
        max_tokens: 6,
        messages: [{ role: 'user', content: 'hi' }],
      });

  it('rebuilds the lost budget counter from the daily sums before admitting anything', async () => {
    h.openai.set({ usage: { prompt_tokens: 2, completion_tokens: 6 } });
    for (let i = 0; i < 10; i += 1) expect((await chat()).status).toBe(200);
    await h.usage.flush();
    // Redis without AOF restarts empty: the user's daily counter (80 tokens) is gone.
    await storage.redis.stop();
    await storage.redis.start();
    await eventually(async () => (await chat()).status === 200, 10_000, 100);
    // A burst after the restart: what the budget has left (about 20 tokens), not a fresh 100.
    const burst = await Promise.all(Array.from({ length: 20 }, () => chat()));
    expect(burst.some((r) => r.status === 429)).toBe(true);
    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId, status: 200 } });
    const served = rows.reduce((sum, r) => sum + r.totalTokens, 0);
    // 80 before the restart; after it, answers until the budget, at most one answer past it.
    expect(served).toBeGreaterThan(10 * PER_ANSWER);
    expect(served).toBeLessThanOrEqual(LIMIT + PER_ANSWER);
    const today = await request(h.app).get('/api/v1/usage/today').set('x-api-key', caller.apiKey);
    expect(today.body.total_tokens).toBe(served);
  }, 60_000);
});
