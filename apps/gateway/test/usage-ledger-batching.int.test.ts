import { randomUUID } from 'node:crypto';
import type { RedisKeyValueStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { describeWith, needRedis, type TestServer } from '@platform/testing';
import { prismaSql } from '../src/batching/raw-sql';
import { createRedisStreamLedger } from '../src/usage/ledger-redis-stream';
import type { LedgerRecord } from '../src/usage/record';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Group commit (batching/tick-batcher.ts): the records of requests that
 * finish in the same event-loop turn share one XADD and their budget settles
 * one script call, each answer still waits for its own record, and the
 * stream's older one-record entries are still drained (a rolling deploy
 * leaves them behind).
 */
const redisServer = needRedis();

/** The harness's store: Redis, since the harness runs on redisServer. */
const redisOf = (h: AiHarness) => h.kv as RedisKeyValueStore;

describeWith(redisServer)('group commit on Redis', () => {
  let server: TestServer | undefined;
  let h: AiHarness;
  let caller: TestCaller;
  let url: string;
  beforeAll(async () => {
    server = await redisServer.start();
  });
  useAiHarness(
    { AI_RATE_LIMIT_PER_MINUTE: '100000' },
    (state) => {
      ({ h, caller, url } = state);
    },
    { listen: true, storage: () => ({ redisUrl: server?.url }) },
  );
  afterAll(async () => {
    await server?.close();
  });

  function chat(project: string) {
    return fetch(`${url}/api/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({
        lane: 'free',
        project_id: project,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
  }

  it('concurrent answers share script calls for records and settles, each recorded and counted exactly once', async () => {
    h.openai.set({ usage: { prompt_tokens: 2, completion_tokens: 3 }, latencyMs: 20 });
    const { redis, keyPrefix } = redisOf(h);
    // Calls on the client itself.
    const turn = jest.spyOn(
      redis as unknown as { moneyTurn: (...args: unknown[]) => Promise<number> },
      'moneyTurn',
    );
    const direct = (spy: jest.SpyInstance) => spy.mock.calls.filter((_, i) => spy.mock.contexts[i] === redis);
    try {
      const responses = await Promise.all(Array.from({ length: 24 }, () => chat('batched')));
      expect(responses.map((r) => r.status)).toEqual(Array(24).fill(200));
      const ids = responses.map((r) => r.headers.get('x-request-id'));
      // Fewer calls than answers: the upstream's answers arrive together, so do their records and settles.
      const calls = direct(turn);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.length).toBeLessThan(24);
      // Each call carries the turn's records and its settles: the ledger stream, then the budget counters.
      for (const args of calls) {
        const keyCount = args[0] as number;
        expect(args[1]).toBe(`${keyPrefix}usage:ledger`);
        expect(keyCount).toBeGreaterThan(1);
        expect(
          (args.slice(2, 1 + keyCount) as string[]).every((k) => k.startsWith(`${keyPrefix}budget:`)),
        ).toBe(true);
      }
      const recorded = calls.flatMap(
        (args) => JSON.parse(args[1 + (args[0] as number)] as string) as unknown[],
      );
      expect(recorded).toHaveLength(24);
      // The settles, summed per counter, leave the budget at exactly what was served (each reserved far more).
      const today = await fetch(`${url}/api/v1/usage/today`, { headers: { 'x-api-key': caller.apiKey } });
      expect(((await today.json()) as { total_tokens: number }).total_tokens).toBe(24 * 5);
      await h.usage.flush();
      const rows = await h.prisma.usageRecord.findMany({
        where: { userId: caller.userId, projectId: 'batched' },
      });
      expect(rows.map((r) => r.requestId).sort()).toEqual([...ids].sort());
      const [daily] = await h.prisma.usageDaily.findMany({
        where: { userId: caller.userId, projectId: 'batched' },
      });
      expect(daily?.requests).toBe(24);
      expect(daily?.totalTokens).toBe(24n * 5n);
    } finally {
      turn.mockRestore();
    }
  });

  const recordOf = (projectId: string, totalTokens: number): LedgerRecord => ({
    requestId: randomUUID(),
    userId: caller.userId,
    apiKeyId: caller.apiKeyId,
    projectId,
    endpoint: 'chat',
    lane: 'free',
    provider: 'groq',
    model: 'free-a',
    status: 200,
    promptTokens: 4,
    completionTokens: totalTokens - 4,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    totalTokens,
    costMicros: 16,
    currency: 'USD',
    estimated: false,
    byok: false,
    latencyMs: 12,
    createdAt: Date.now(),
  });

  /**
   * What a Postgres outage leaves: 5 entries of 3 records each in a stream of
   * their own, waiting before the drain starts, and a drain of that stream.
   */
  async function waitingBacklog(projectId: string, drain: { entriesPerRead?: number; batch: number }) {
    const { redis, keyPrefix } = redisOf(h);
    const streamKey = `${keyPrefix}usage:${projectId}`;
    const records = Array.from({ length: 15 }, (_, i) => recordOf(projectId, 10 + i));
    for (let e = 0; e < 5; e += 1)
      await redis.xadd(streamKey, '*', 'b', JSON.stringify(records.slice(e * 3, e * 3 + 3)));
    const logger = createLogger({ service: 'gateway', destination: createMemoryDestination() });
    const ledger = createRedisStreamLedger({
      redis,
      prisma: h.prisma,
      sql: prismaSql(h.prisma),
      logger,
      streamKey,
      lingerMs: 0,
      ...drain,
    });
    return { redis, records, ledger, streamKey };
  }

  it('a backlog of more entries than one read holds is drained in reads of entriesPerRead', async () => {
    const { redis, records, ledger, streamKey } = await waitingBacklog('backlog', {
      entriesPerRead: 2,
      batch: 3,
    });
    // The drain reads on its own connection (a duplicate): watch the method where ioredis defines it.
    let owner: object = redis;
    while (!Object.hasOwn(owner, 'xreadgroup')) owner = Object.getPrototypeOf(owner);
    const reads = jest.spyOn(owner as { xreadgroup: (...args: unknown[]) => unknown }, 'xreadgroup');
    try {
      ledger.start();
      await ledger.flush();
      const rows = await h.prisma.usageRecord.findMany({
        where: { userId: caller.userId, projectId: 'backlog' },
      });
      expect(rows.map((r) => r.requestId).sort()).toEqual(records.map((r) => r.requestId).sort());
      const [daily] = await h.prisma.usageDaily.findMany({
        where: { userId: caller.userId, projectId: 'backlog' },
      });
      expect(daily?.totalTokens).toBe(BigInt(records.reduce((sum, r) => sum + r.totalTokens, 0)));
      // Each read of this stream asked for at most 2 entries. The spy sits on ioredis' shared
      // prototype: the harness's own ledger drain (128 a read) may read its stream meanwhile.
      const counts = reads.mock.calls
        .filter((args) => args.includes(streamKey))
        .map((args) => Number(args[args.indexOf('COUNT') + 1]));
      expect(counts.length).toBeGreaterThanOrEqual(3);
      expect(new Set(counts)).toEqual(new Set([2]));
    } finally {
      reads.mockRestore();
      await ledger.close();
    }
  });

  it('the entries of one read go to Postgres as they are, in one statement', async () => {
    // `batch` applies only when Postgres refused a read's entries and they are checked one by one.
    const { records, ledger } = await waitingBacklog('one-statement', { batch: 3 });
    const statements = jest.spyOn(h.prisma, '$queryRawUnsafe');
    const parse = jest.spyOn(JSON, 'parse');
    try {
      ledger.start();
      await ledger.flush();
      const inserts = statements.mock.calls.filter(([sql]) =>
        String(sql).includes('INSERT INTO usage_records'),
      );
      expect(inserts).toHaveLength(1);
      // Not parsed here: the stream's text went to Postgres as written (Prisma parses its own parameter list).
      const parsedEntries = parse.mock.calls.filter(([text]) => /^\[\{"requestId"/.test(String(text)));
      expect(parsedEntries).toEqual([]);
      const rows = await h.prisma.usageRecord.findMany({
        where: { userId: caller.userId, projectId: 'one-statement' },
      });
      expect(rows.map((r) => r.requestId).sort()).toEqual(records.map((r) => r.requestId).sort());
      expect(rows.find((r) => r.requestId === records[7]?.requestId)).toEqual(
        expect.objectContaining({ totalTokens: 17, promptTokens: 4, completionTokens: 13, costMicros: 16n }),
      );
    } finally {
      statements.mockRestore();
      parse.mockRestore();
      await ledger.close();
    }
  });

  it('records Postgres would refuse are parked and reported, and the drain goes on with the rest', async () => {
    const { redis, keyPrefix } = redisOf(h);
    const good = [recordOf('poison', 10), recordOf('poison', 11), recordOf('poison', 12)];
    const tuple = Object.values(recordOf('poison', 13)); // a record as values without names
    const { createdAt: _, ...undated } = recordOf('poison', 14);
    const fractional = { ...recordOf('poison', 15), promptTokens: 4.4, costMicros: 16.6 };
    // Postgres would take a negative count; the ledger must not (Postgres checks the records first).
    const negative = { ...recordOf('poison', 16), completionTokens: -3 };
    await redis.xadd(`${keyPrefix}usage:ledger`, '*', 'b', JSON.stringify([good[0], tuple, undated]));
    await redis.xadd(`${keyPrefix}usage:ledger`, '*', 'b', JSON.stringify([good[1], fractional, negative]));
    await redis.xadd(`${keyPrefix}usage:ledger`, '*', 'r', JSON.stringify(good[2]));
    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({
      where: { userId: caller.userId, projectId: 'poison' },
    });
    expect(rows.map((r) => r.requestId).sort()).toEqual(
      [...good.map((r) => r.requestId), fractional.requestId].sort(),
    );
    // A fractional count is stored rounded rather than refused.
    expect(rows.find((r) => r.requestId === fractional.requestId)).toEqual(
      expect.objectContaining({ promptTokens: 4, costMicros: 17n }),
    );
    const parked = h.logs.lines
      .map((l) => JSON.parse(l) as { msg?: string; reason?: string })
      .filter((l) => l.msg === 'usage ledger record refused; parked in usage_parked');
    expect(parked.map((l) => l.reason)).toEqual([
      'not an object',
      'createdAt must be a time',
      'completionTokens must be a count',
    ]);
  });

  it('an entry written before batching (one record, field r) is drained like a batch', async () => {
    const { redis, keyPrefix } = redisOf(h);
    const record = recordOf('legacy-entry', 10);

    await redis.xadd(`${keyPrefix}usage:ledger`, '*', 'r', JSON.stringify(record));
    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({ where: { requestId: record.requestId } });
    expect(rows).toEqual([
      expect.objectContaining({ projectId: 'legacy-entry', totalTokens: 10, costMicros: 16n }),
    ]);
  });
});
