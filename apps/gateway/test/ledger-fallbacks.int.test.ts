import { randomUUID } from 'node:crypto';
import { describeWith, eventually, needPrivateStorage, type PrivateStorage } from '@platform/testing';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';
import { parseSse } from './support/sse';

/**
 * Issue 39, item 5: recorded on every path. A record the Redis stream does
 * not take (Redis gone between the reservation and the end of the answer)
 * goes to Postgres directly; with Postgres gone too, to the local spool,
 * replayed when Postgres is back. Either way the answer completes and has
 * exactly one record. The test owns both servers.
 */
const privateStorage = needPrivateStorage();

describeWith(privateStorage)('ledger fallbacks', () => {
  let storage: PrivateStorage;
  let h: AiHarness;
  let caller: TestCaller;
  let url: string;

  beforeAll(async () => {
    storage = await privateStorage.start();
    h = await startAiHarness({ AI_RATE_LIMIT_PER_MINUTE: '100000' }, storage.urls);
    ({ url } = await h.listen());
  }, 30_000);
  afterAll(() => storage?.close(async () => h?.close()), 30_000);
  beforeEach(async () => {
    h.resetFakes();
    caller = await h.createCaller();
    // Warm up (key cache, connections, the budget counters) on storage that is up, as a client would have.
    const warm = await eventually(async () => {
      const res = await fetch(`${url}/api/v1/ai/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
        body: JSON.stringify({
          lane: 'free',
          project_id: 'warm',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      return res.status === 200;
    });
    expect(warm).toBe(true);
  });

  /** A stream whose upstream takes ~1 s; `during` runs once the first chunk has arrived. */
  async function streamAcross(during: () => Promise<void>, clientId: string) {
    h.openai.set({
      chunks: ['a', 'b', 'c', 'd'],
      chunkDelayMs: 300,
      usage: { prompt_tokens: 2, completion_tokens: 4 },
    });
    const res = await fetch(`${url}/api/v1/ai/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey, 'x-request-id': clientId },
      body: JSON.stringify({
        lane: 'free',
        project_id: 'fallback',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no body');
    const decoder = new TextDecoder();
    let text = '';
    let ran = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!ran && text.includes('event: chunk')) {
        ran = true;
        await during();
      }
    }
    return { status: res.status, events: parseSse(text).events };
  }

  async function recordsOf(clientId: string) {
    return h.prisma.usageRecord.findMany({ where: { userId: caller.userId, clientRequestId: clientId } });
  }

  it('a stream whose Redis append fails at its end goes to Postgres: done, exactly one record', async () => {
    const clientId = randomUUID();
    const answer = await streamAcross(() => storage.redis.stop(), clientId);
    try {
      expect(answer.status).toBe(200);
      expect(answer.events.at(-1)?.event).toBe('done');
      const rows = await recordsOf(clientId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toEqual(expect.objectContaining({ status: 200, totalTokens: 6, endpoint: 'stream' }));
    } finally {
      await storage.redis.start();
    }
    await h.usage.flush();
    expect(await recordsOf(clientId)).toHaveLength(1);
  }, 30_000);

  it('with Redis and Postgres gone, the record is spooled locally and replayed once Postgres is back', async () => {
    const clientId = randomUUID();
    const answer = await streamAcross(async () => {
      await Promise.all([storage.redis.stop(), storage.postgres.stop()]);
    }, clientId);
    try {
      expect(answer.status).toBe(200);
      expect(answer.events.at(-1)?.event).toBe('done');
    } finally {
      await Promise.all([storage.redis.start(), storage.postgres.start()]);
    }
    await h.usage.flush();
    const rows = await recordsOf(clientId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual(expect.objectContaining({ status: 200, totalTokens: 6 }));
    const [sums] = await h.prisma.$queryRaw<{ requests: bigint; tokens: bigint }[]>`
      SELECT sum(requests)::bigint AS requests, sum(total_tokens)::bigint AS tokens
        FROM usage_daily WHERE user_id = ${caller.userId}::uuid AND project_id = 'fallback'`;
    expect({ requests: Number(sums?.requests), tokens: Number(sums?.tokens) }).toEqual({
      requests: 1,
      tokens: 6,
    });
    const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('usage_ledger_fallback_total{to="spool"');
  }, 30_000);
});
