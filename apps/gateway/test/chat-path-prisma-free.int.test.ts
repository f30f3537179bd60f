import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

// Issue 46: a worker's first Prisma query of any kind (raw ones included)
// instantiates Prisma's query compiler, ~8-9 MB of every worker for good
// (docs/performance.md). So what a chat reads and writes in Postgres (the key's
// lookup and last-used time, the budgets and their window use, stored provider
// keys, the projects that capture content, stored responses, the ledger's and the
// request log's batches) goes through raw SQL on the pool. This test holds that line: the
// chat endpoints, streams included, with every deferred write flushed, make no
// Prisma query at all, while their records do reach Postgres.

let h: AiHarness;
let caller: TestCaller;
useAiHarness({ AI_BUDGET_DEFAULTS: 'project.monthly.cost=5000000' }, (state) => {
  ({ h, caller } = state);
});

const messages = [{ role: 'user', content: 'hi' }];

describe('the chat path stays off Prisma', () => {
  it('a chat, a stream, OpenAI-, Anthropic- and Responses-compatible calls and a readiness probe, flushed, run no Prisma query', async () => {
    h.openai.set({ chunks: ['Hel', 'lo'], usage: { prompt_tokens: 4, completion_tokens: 2 } });
    const before = h.prismaQueries.length;

    const answers = [
      await request(h.app)
        .post('/api/v1/ai/chat/completions')
        .set('x-api-key', caller.apiKey)
        .send({ lane: 'free', project_id: 'p1', messages }),
      await request(h.app)
        .post('/api/v1/ai/chat/stream')
        .set('x-api-key', caller.apiKey)
        .send({ lane: 'free', project_id: 'p1', messages }),
      await request(h.app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${caller.apiKey}`)
        .send({ model: 'free', messages }),
      await request(h.app)
        .post('/v1/messages')
        .set('x-api-key', caller.apiKey)
        .send({ model: 'free', max_tokens: 16, messages }),
      await request(h.app)
        .post('/v1/responses')
        .set('authorization', `Bearer ${caller.apiKey}`)
        .send({ model: 'free', input: 'hi', store: true }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // The stored response reads back (and continues) through the same raw SQL.
    const stored = await request(h.app)
      .get(`/v1/responses/${answers[4]?.body.id}`)
      .set('authorization', `Bearer ${caller.apiKey}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ id: answers[4]?.body.id, store: true });

    // The readiness probe checks Postgres through the same pool, not Prisma.
    const ready = await request(h.app).get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database).toBe('up');

    await h.usage.flush();
    await h.deps.apiKeys.lastUsed.flush();
    await h.deps.ai.requestLog?.flush();

    // The records are there: five usage records, five request log entries, the key's last use.
    const [counts] = await h.sql.query<{ usage: number; logged: number; used: boolean }>(
      `SELECT (SELECT count(*)::int FROM usage_records WHERE user_id = $1::uuid) AS usage,
              (SELECT count(*)::int FROM request_log WHERE user_id = $1::uuid) AS logged,
              (SELECT last_used_at IS NOT NULL FROM api_keys WHERE id = $2::uuid) AS used`,
      [caller.userId, caller.apiKeyId],
    );
    expect(counts).toEqual({ usage: 5, logged: 5, used: true });
    expect(h.prismaQueries.slice(before)).toEqual([]);
  });
});
