import { randomBytes, randomUUID } from 'node:crypto';
import type { RedisKeyValueStore } from '@platform/db';
import { describeWith, eventually, needRedis, type TestServer } from '@platform/testing';
import request from 'supertest';
import type { LedgerRecord } from '../src/usage/record';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Issue 39, item 8: one bad record never stops the others. Entries written
 * into the ledger stream by hand (as a bug, an older version or a hostile
 * writer could) that Postgres refuses are isolated within their batch and
 * parked in usage_parked; every other record of the batch, and every later
 * one, arrives. A drain that stops advancing makes the service not ready.
 */
const redisServer = needRedis();
let h: AiHarness;
let caller: TestCaller;

/** The harness's store: Redis, since the harness runs on redisServer. */
const redisOf = (h: AiHarness) => h.kv as RedisKeyValueStore;

describeWith(redisServer)('the ledger drain on Redis', () => {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await redisServer.start();
  });
  useAiHarness(
    { AI_RATE_LIMIT_PER_MINUTE: '100000' },
    (state) => {
      ({ h, caller } = state);
    },
    { storage: () => ({ redisUrl: server?.url }) },
  );
  afterAll(async () => {
    await server?.close();
  });

  function recordFor(userId: string, projectId: string, overrides: Partial<LedgerRecord> = {}): LedgerRecord {
    return {
      requestId: randomUUID(),
      userId,
      apiKeyId: null,
      projectId,
      endpoint: 'chat',
      lane: 'free',
      provider: 'groq',
      model: 'free-a',
      status: 200,
      promptTokens: 1,
      completionTokens: 1,
      cachedTokens: 0,
      totalTokens: 2,
      costMicros: 3,
      currency: 'USD',
      estimated: false,
      byok: false,
      latencyMs: 1,
      createdAt: Date.now(),
      ...overrides,
    };
  }

  const chat = (project: string) =>
    request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send({ lane: 'free', project_id: project, messages: [{ role: 'user', content: 'hi' }] });

  /** The value of an unlabelled metric (besides the service label) on /metrics. */
  async function metric(app: Parameters<typeof request>[0], name: string): Promise<number> {
    const text = (await request(app).get('/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    return Number(line?.slice(line.lastIndexOf(' ') + 1));
  }

  async function totals(userId: string) {
    const [row] = await h.prisma.$queryRaw<{ requests: bigint; tokens: bigint }[]>`
      SELECT coalesce(sum(requests), 0)::bigint AS requests, coalesce(sum(total_tokens), 0)::bigint AS tokens
        FROM usage_daily WHERE user_id = ${userId}::uuid`;
    return { requests: Number(row?.requests), tokens: Number(row?.tokens) };
  }

  it('parks what Postgres refuses in a poisoned batch; the rest of it and every later record arrive', async () => {
    h.openai.set({ usage: { prompt_tokens: 2, completion_tokens: 3 } });
    const { redis, keyPrefix } = redisOf(h);
    const stream = `${keyPrefix}usage:ledger`;
    const good = recordFor(caller.userId, 'good');
    const surrogate = recordFor(caller.userId, 'p\ud800');
    const nul = recordFor(caller.userId, 'p\u0000q');
    // Random text does not compress: too long for the daily sums' index, which Postgres refuses (54000).
    const tooLong = recordFor(caller.userId, randomBytes(6000).toString('hex'));
    const notUuid = { ...recordFor(caller.userId, 'x'), requestId: 'not-a-uuid' };
    // One entry mixing good and bad records (JSON.stringify escapes the lone surrogate as \ud800).
    await redis.xadd(stream, '*', 'b', JSON.stringify([good, surrogate, tooLong, nul, notUuid]));
    await redis.xadd(stream, '*', 'b', '[{"requestId": truncated');
    const answered = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(`after-${i}`)));
    expect(answered.map((r) => r.status)).toEqual(Array(6).fill(200));

    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
    const projects = rows.map((r) => r.projectId).sort();
    // Text Postgres cannot hold is stored as U+FFFD (money is kept); the rest is parked.
    expect(projects).toEqual(['good', 'p\ufffd', 'p\ufffdq', ...answered.map((_, i) => `after-${i}`)].sort());
    expect(await totals(caller.userId)).toEqual({ requests: 9, tokens: 3 * 2 + 6 * 5 });
    const parked = await h.prisma.usageParked.findMany({ orderBy: { id: 'asc' } });
    const mine = parked.filter(
      (p) => p.payload.includes(caller.userId) || p.reason === 'unreadable stream entry',
    );
    expect(mine.map((p) => p.reason)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^54000: /),
        'requestId and userId must be UUIDs',
        'unreadable stream entry',
      ]),
    );
    expect(mine.some((p) => p.payload.includes(tooLong.requestId))).toBe(true);
    expect(await metric(h.app, 'usage_ledger_parked_total')).toBeGreaterThanOrEqual(3);
  });

  it('reports a drain that stopped advancing on /health/ready and /metrics, and recovers', async () => {
    const { redis, keyPrefix } = redisOf(h);
    const stream = `${keyPrefix}usage:ledger`;
    const app = h.startInstance({}, { ledger: { stallMs: 400, retryDelayMs: 50 } });
    expect((await request(app).get('/health/ready')).status).toBe(200);
    // A failure that is no fault of the data (an undefined table): the drain retries, and does not advance.
    await h.prisma.$executeRawUnsafe('ALTER TABLE usage_daily RENAME TO usage_daily_away');
    try {
      await redis.xadd(stream, '*', 'b', JSON.stringify([recordFor(caller.userId, 'stuck')]));
      const first = await request(app).get('/health/ready');
      expect(first.body.details.usage_ledger.backlog).toBeGreaterThan(0);
      const stalled = await eventually(async () => {
        const res = await request(app).get('/health/ready');
        return res.status === 503 && res.body.checks.usage_ledger === 'down';
      });
      expect(stalled).toBe(true);
      expect(await metric(app, 'usage_ledger_drain_stalled')).toBe(1);
    } finally {
      await h.prisma.$executeRawUnsafe('ALTER TABLE usage_daily_away RENAME TO usage_daily');
    }
    await h.usage.flush();
    expect(await h.prisma.usageRecord.count({ where: { userId: caller.userId, projectId: 'stuck' } })).toBe(
      1,
    );
    expect((await request(app).get('/health/ready')).status).toBe(200);
    expect(await metric(app, 'usage_ledger_drain_stalled')).toBe(0);
  });
});
