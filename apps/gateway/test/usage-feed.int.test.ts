import { randomUUID } from 'node:crypto';
import { createGatewayClient, createGatewayServiceClient, PlatformApiError } from '@platform/client';
import type { UsageRecord } from '@platform/contract';
import { describeWithSharedServers, type SharedServers, startSharedServers } from '@platform/testing';
import request from 'supertest';
import { prismaSql } from '../src/batching/raw-sql';
import type { LedgerRecord } from '../src/usage/record';
import { insertLedgerRecords } from '../src/usage/repo';
import { type AiHarness, startAiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Item 5 of issue 31: the ledger feed, per user (session or key) and across
 * users (service token), in the typed client. Its cursor must never skip a
 * record that a concurrent writer commits after a later one.
 */
const SERVICE_TOKEN = `svc-${'x'.repeat(40)}`;
let h: AiHarness;
let caller: TestCaller;
let url: string;
useAiHarness(
  { GATEWAY_SERVICE_TOKEN: SERVICE_TOKEN },
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

function record(userId: string, extra: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    requestId: randomUUID(),
    userId,
    apiKeyId: null,
    projectId: 'feed',
    endpoint: 'chat',
    lane: 'free',
    provider: 'groq',
    model: 'free-a',
    status: 200,
    promptTokens: 1,
    completionTokens: 2,
    cachedTokens: 0,
    totalTokens: 3,
    costMicros: 5,
    currency: 'USD',
    estimated: false,
    byok: false,
    latencyMs: 1,
    createdAt: Date.now(),
    ...extra,
  };
}

/** Retries an assertion until it passes (10 s), then fails with its last error. */
async function eventually(assertion: () => Promise<void>): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await assertion();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function readAll(
  read: (cursor?: string) => Promise<{ records: UsageRecord[]; next_cursor: string }>,
  from?: string,
) {
  const out: UsageRecord[] = [];
  let cursor = from;
  for (;;) {
    const page = await read(cursor);
    out.push(...page.records);
    cursor = page.next_cursor;
    if (page.records.length === 0) return { records: out, cursor };
  }
}

describe('usage feed', () => {
  it("pages a user's records in order through the typed client, with every field", async () => {
    h.openai.set({ usage: { prompt_tokens: 3, completion_tokens: 4 } });
    const client = createGatewayClient({ baseUrl: url, apiKey: caller.apiKey });
    const answers = [];
    for (let i = 0; i < 5; i += 1)
      answers.push(
        await client.chat({ lane: 'free', project_id: `p${i}`, messages: [{ role: 'user', content: 'hi' }] }),
      );
    await h.usage.flush();
    let records: UsageRecord[] = [];
    await eventually(async () => {
      ({ records } = await readAll((cursor) => client.usageRecords({ cursor, limit: 2 })));
      expect(records.map((r) => r.project_id)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    });
    expect(records[0]).toEqual({
      id: expect.any(String),
      // The typed client sends its own x-request-id, kept for correlation.
      client_request_id: expect.any(String),
      user_id: caller.userId,
      api_key_id: caller.apiKeyId,
      project_id: 'p0',
      lane: 'free',
      provider: 'groq',
      model: 'free-a',
      endpoint: 'chat',
      status: 200,
      prompt_tokens: 3,
      completion_tokens: 4,
      cached_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: 7,
      cost_micros: 11,
      currency: 'USD',
      estimated: false,
      byok: false,
      created_at: expect.any(String),
    });
    // Another user's records are not in this user's feed, but in the service feed.
    const other = await h.createCaller();
    await insertLedgerRecords(prismaSql(h.prisma), [record(other.userId)]);
    const service = createGatewayServiceClient({ baseUrl: url, serviceToken: SERVICE_TOKEN });
    // The feed trails the oldest running transaction of the (shared) Postgres cluster: wait for it.
    await eventually(async () => {
      const all = await readAll((cursor) => service.usageFeed({ cursor, limit: 1000 }));
      const users = new Set(all.records.map((r) => r.user_id));
      expect(users.has(caller.userId) && users.has(other.userId)).toBe(true);
    });
    const mine = await readAll((cursor) => service.usageFeed({ cursor, user_id: other.userId }));
    expect(mine.records.map((r) => r.user_id)).toEqual([other.userId]);
  });

  it('pages the rows of one batch (one transaction) in the order they were written', async () => {
    // One INSERT: one xid. Request ids in descending order, so that a sort by
    // request id (the output column named id) rather than the row id shows.
    const other = await h.createCaller();
    const ids = Array.from({ length: 5 }, (_, i) => `${'f'.repeat(7)}${9 - i}-0000-4000-8000-000000000000`);
    await insertLedgerRecords(
      prismaSql(h.prisma),
      ids.map((requestId, i) => record(other.userId, { requestId, projectId: `b${i}` })),
    );
    const service = createGatewayServiceClient({ baseUrl: url, serviceToken: SERVICE_TOKEN });
    await eventually(async () => {
      const all = await readAll((cursor) => service.usageFeed({ cursor, user_id: other.userId, limit: 2 }));
      expect(all.records.map((r) => r.project_id)).toEqual(['b0', 'b1', 'b2', 'b3', 'b4']);
    });
  });

  it('the service feed wants the service token: none -> 401, a wrong one -> 403', async () => {
    expect((await request(h.app).get('/api/v1/usage/feed')).status).toBe(401);
    const wrong = await request(h.app)
      .get('/api/v1/usage/feed')
      .set('authorization', `Bearer ${'y'.repeat(44)}`);
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ error: 'forbidden', code: 'forbidden', request_id: expect.any(String) });
    // An API key is not a service credential.
    const byKey = await request(h.app).get('/api/v1/usage/feed').set('x-api-key', caller.apiKey);
    expect(byKey.status).toBe(401);
    const client = createGatewayServiceClient({ baseUrl: url, serviceToken: 'z'.repeat(40), retry: false });
    await expect(client.usageFeed()).rejects.toBeInstanceOf(PlatformApiError);
  });

  it('a bad cursor is a 400 naming it', async () => {
    const res = await request(h.app)
      .get('/api/v1/usage/records?cursor=bm9wZQ')
      .set('x-api-key', caller.apiKey);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'cursor', message: expect.any(String) }]);
  });
});

// Concurrent transactions need a Postgres server (PGlite is one connection):
// TEST_DATABASE_URL (CI), else a private one for this block, else one skip line.
describeWithSharedServers('the feed under concurrent writers (apps/gateway/test/usage-feed.int.test.ts)')(
  'usage feed on Postgres',
  () => {
    let servers: SharedServers | undefined;
    let h: AiHarness;
    let url: string;
    let caller: TestCaller;
    beforeAll(async () => {
      servers = await startSharedServers();
      h = await startAiHarness(
        { GATEWAY_SERVICE_TOKEN: SERVICE_TOKEN },
        { databaseServerUrl: servers.databaseUrl, redisUrl: servers.redisUrl },
      );
      url = (await h.listen()).url;
      caller = await h.createCaller();
    }, 120_000);
    afterAll(async () => {
      await h?.close();
      await servers?.close();
    });

    it('never skips a record committed after a later one (concurrent writers)', async () => {
      const prisma = h.prisma;
      const client = createGatewayClient({ baseUrl: url, apiKey: caller.apiKey });
      const { cursor: start } = await readAll((cursor) => client.usageRecords({ cursor }));
      // Writer A inserts first (smaller id) and commits last; writer B commits in between.
      let releaseA!: () => void;
      const gateA = new Promise<void>((resolve) => {
        releaseA = resolve;
      });
      let insertedA!: () => void;
      const aInserted = new Promise<void>((resolve) => {
        insertedA = resolve;
      });
      const a = prisma.$transaction(
        async (tx) => {
          await insertLedgerRecords(prismaSql(tx), [record(caller.userId, { projectId: 'A' })]);
          insertedA();
          await gateA;
        },
        { timeout: 20_000 },
      );
      await aInserted;
      await insertLedgerRecords(prismaSql(prisma), [record(caller.userId, { projectId: 'B' })]);
      // B is committed, A is not: the feed shows neither yet (B's transaction is newer than A's).
      const early = await readAll((cursor) => client.usageRecords({ cursor }), start);
      expect(early.records.map((r) => r.project_id)).toEqual([]);
      releaseA();
      await a;
      const seen: string[] = [];
      let cursor = early.cursor;
      await eventually(async () => {
        const late = await readAll((c) => client.usageRecords({ cursor: c }), cursor);
        seen.push(...late.records.map((r) => r.project_id));
        cursor = late.cursor;
        expect(seen.sort()).toEqual(['A', 'B']);
      });
    });
  },
);
