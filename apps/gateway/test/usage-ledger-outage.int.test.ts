import { describeWith, needPrivateStorage, type PrivateStorage } from '@platform/testing';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';
import { parseSse } from './support/sse';

/**
 * Item 2 of issue 31: a Postgres outage under load. Answers keep going out
 * (the record's durable point is the Redis stream); when Postgres returns
 * the stream is drained, and every answer a client received has exactly one
 * record, counted once in the daily sums. The test owns both servers.
 */
const privateStorage = needPrivateStorage();
let storage: PrivateStorage;
let h: AiHarness;
let caller: TestCaller;
let url: string;

beforeAll(async () => {
  storage = await privateStorage.start();
  h = await startAiHarness({ AI_RATE_LIMIT_PER_MINUTE: '100000' }, storage.urls);
  caller = await h.createCaller();
  ({ url } = await h.listen());
}, 30_000);
afterAll(() => storage?.close(async () => h?.close()), 30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request; the ledger id when the client received the whole answer, else null. */
async function call(i: number): Promise<string | null> {
  const stream = i % 2 === 1;
  try {
    const res = await fetch(`${url}/api/v1/ai/chat/${stream ? 'stream' : 'completions'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({
        lane: 'free',
        project_id: 'outage',
        messages: [{ role: 'user', content: `n${i}` }],
      }),
    });
    const text = await res.text();
    if (res.status !== 200) return null;
    if (stream && parseSse(text).events.at(-1)?.event !== 'done') return null;
    return res.headers.get('x-request-id');
  } catch {
    return null;
  }
}

describeWith(privateStorage)('the ledger through a Postgres outage', () => {
  it('records every answer given during a Postgres outage once Postgres is back', async () => {
    h.openai.set({
      chunks: ['a', 'b', 'c'],
      usage: { prompt_tokens: 2, completion_tokens: 3 },
      latencyMs: 5,
    });
    // Warm the caches (key, stored keys, budget rules) the outage will lean on.
    expect(await call(0)).not.toBeNull();
    const answered: string[] = [];
    let stop = false;
    let n = 1;
    const workers = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const id = await call(n++);
        if (id) answered.push(id);
      }
    });
    await sleep(300);
    await storage.postgres.stop();
    const beforeOutage = answered.length;
    await sleep(1500);
    const duringOutage = answered.length - beforeOutage;
    await storage.postgres.start();
    await sleep(300);
    stop = true;
    await Promise.all(workers);

    expect(duringOutage).toBeGreaterThan(0);
    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId, status: 200 } });
    const ids = new Set(rows.map((r) => r.requestId));
    expect(answered.filter((id) => !ids.has(id))).toEqual([]);
    // One row per answer (the first warm-up call included), and the daily sums counted each once.
    expect(rows.length).toBe(answered.length + 1);
    const [sums] = await h.prisma.$queryRaw<{ requests: bigint }[]>`
      SELECT sum(requests)::bigint AS requests FROM usage_daily WHERE user_id = ${caller.userId}::uuid`;
    const all = await h.prisma.usageRecord.count({ where: { userId: caller.userId } });
    expect(Number(sums?.requests)).toBe(all);
  }, 60_000);
});
