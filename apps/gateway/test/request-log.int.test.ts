import { randomUUID } from 'node:crypto';
import { FAULTS } from '@platform/testing';
import { prismaSql } from '../src/batching/raw-sql';
import { startRequestLogRetention } from '../src/observability/request-log';
import { insertRequestLog } from '../src/observability/request-log-repo';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Issue 43, the request log: every AI request with its attempts (status,
 * timings), tokens, cost, key, project, client and error, written in batches
 * off the request path; searched and opened through the API.
 */
let h: AiHarness;
let url: string;
let caller: TestCaller;
useAiHarness(
  {},
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

const body = { lane: 'free', project_id: 'proj-log', messages: [{ role: 'user', content: 'hi' }] };

async function send(path: string, who: TestCaller = caller) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': who.apiKey, 'user-agent': 'log-test/1.0' },
    body: JSON.stringify(body),
  });
  await res.text();
  return res.status;
}

async function get(path: string, who: TestCaller = caller) {
  const res = await fetch(`${url}${path}`, { headers: { 'x-api-key': who.apiKey } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function flushed() {
  await h.deps.ai.requestLog?.flush();
}

describe('request log', () => {
  it('a stream that failed over: its attempts in order, time to first token, tokens, cost, client', async () => {
    h.openai.setFor('free-a', FAULTS.rateLimitedNoHint);
    h.openai.setFor('free-b', { chunks: ['a', 'b'], usage: { prompt_tokens: 7, completion_tokens: 3 } });
    expect(await send('/api/v1/ai/chat/stream')).toBe(200);
    await flushed();
    const { status, body: page } = await get(`/api/v1/request-log?key_id=${caller.apiKeyId}&status=200`);
    expect(status).toBe(200);
    const requests = page.requests as Array<Record<string, unknown>>;
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      key_id: caller.apiKeyId,
      project_id: 'proj-log',
      endpoint: 'stream',
      lane: 'free',
      provider: 'cerebras',
      model: 'free-b',
      status: 200,
      error: null,
      prompt_tokens: 7,
      completion_tokens: 3,
      cost_micros: 13,
      user_agent: 'log-test/1.0',
      ttft_ms: expect.any(Number),
      attempts: [
        { target: 'groq/free-a', outcome: 'rate_limited', status: 429, retry: 0 },
        { target: 'cerebras/free-b', outcome: 'success', status: 200, retry: 0 },
      ],
    });
    const [first, second] = (requests[0] as { attempts: Array<{ start_ms: number; duration_ms: number }> })
      .attempts;
    expect(second?.start_ms).toBeGreaterThanOrEqual((first?.start_ms ?? 0) + (first?.duration_ms ?? 0));
  });

  it('a failed request is found by key and status and opened with its attempts; another user gets 404', async () => {
    h.openai.set(FAULTS.rateLimitedNoHint);
    expect(await send('/api/v1/ai/chat/completions')).toBeGreaterThanOrEqual(400);
    h.openai.set({ content: 'fine' });
    expect(await send('/api/v1/ai/chat/completions')).toBe(200);
    await flushed();
    const { body: page } = await get(`/api/v1/request-log?key_id=${caller.apiKeyId}&status=failed`);
    const requests = page.requests as Array<Record<string, unknown>>;
    expect(requests).toHaveLength(1);
    const failed = requests[0] as { request_id: string; status: number; error: string | null };
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(failed.error).toEqual(expect.any(String));

    const detail = await get(`/api/v1/request-log/${failed.request_id}`);
    expect(detail.status).toBe(200);
    expect((detail.body.attempts as Array<{ outcome: string }>).map((a) => a.outcome)).toEqual([
      'rate_limited',
      'rate_limited',
      'rate_limited',
    ]);
    const other = await h.createCaller();
    expect((await get(`/api/v1/request-log/${failed.request_id}`, other)).status).toBe(404);
    expect(((await get('/api/v1/request-log', other)).body.requests as unknown[]).length).toBe(0);
  });

  it('filters by model, cost and latency, pages with a cursor, refuses a bad cursor', async () => {
    h.openai.set({ content: 'x', usage: { prompt_tokens: 2, completion_tokens: 1 } });
    for (let i = 0; i < 3; i++) expect(await send('/api/v1/ai/chat/completions')).toBe(200);
    await flushed();
    const mine = `key_id=${caller.apiKeyId}`;
    const first = await get(`/api/v1/request-log?${mine}&model=free-a&limit=2`);
    expect((first.body.requests as unknown[]).length).toBe(2);
    const next = first.body.next_cursor as string;
    const second = await get(`/api/v1/request-log?${mine}&limit=2&cursor=${encodeURIComponent(next)}`);
    expect((second.body.requests as unknown[]).length).toBe(1);
    expect(((await get(`/api/v1/request-log?${mine}&model=other`)).body.requests as unknown[]).length).toBe(
      0,
    );
    expect(
      ((await get(`/api/v1/request-log?${mine}&min_cost_micros=1000000`)).body.requests as unknown[]).length,
    ).toBe(0);
    expect(
      ((await get(`/api/v1/request-log?${mine}&min_latency_ms=0`)).body.requests as unknown[]).length,
    ).toBe(3);
    const bad = await get('/api/v1/request-log?cursor=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.request_id).toEqual(expect.any(String));
    // A value of the wrong kind is the contract's 422, as for every query here.
    expect((await get('/api/v1/request-log?status=abc')).status).toBe(422);
  });

  it('COPY stores text as the JSON statement does; a replayed batch leaves one row each', async () => {
    const createdAt = new Date(Date.UTC(2026, 10, 29, 1, 2, 3, 456));
    const awkward = 'tab\there, line\nbreak\r, back\\slash \\N, quote " and é 😀';
    const row = (projectId: string) => ({
      requestId: randomUUID(),
      userId: caller.userId,
      apiKeyId: null,
      projectId,
      endpoint: 'chat',
      lane: null,
      provider: 'groq',
      model: 'free-a',
      status: 502,
      promptTokens: 4,
      completionTokens: 0,
      cachedTokens: 0,
      costMicros: 2.5,
      currency: 'USD',
      latencyMs: 3.5,
      ttftMs: 0.4,
      userAgent: awkward,
      error: `upstream said: ${awkward}`,
      attempts: [
        { target: 'groq/free-a', outcome: 'failure', status: 502, retry: 0, start_ms: 0, duration_ms: 1 },
      ],
      prompt: awkward,
      answer: '',
      createdAt,
    });
    const viaCopy = [row('copy-a'), row('copy-b')];
    const viaJson = [row('json-a')];
    const calls: string[] = [];
    const watched = {
      copyFrom: (sql: string, data: string) => {
        calls.push('copy');
        return h.sql.copyFrom(sql, data);
      },
      query: <T extends Record<string, unknown>>(sql: string, params?: unknown[]) => {
        calls.push('json');
        return h.sql.query<T>(sql, params);
      },
      execute: (sql: string, params?: unknown[]) => {
        calls.push('execute');
        return h.sql.execute(sql, params);
      },
    };
    const refused: unknown[] = [];
    await insertRequestLog(watched, viaCopy, (err) => refused.push(err));
    expect(calls).toEqual(['copy']);
    expect(refused).toEqual([]);
    await insertRequestLog(prismaSql(h.prisma), viaJson);
    // The retry of a batch whose first write committed: COPY refuses the duplicate, the JSON statement skips it.
    const fresh = row('copy-c');
    await insertRequestLog(watched, [...viaCopy, fresh], (err) => refused.push(err));
    expect(calls).toEqual(['copy', 'copy', 'json']);
    // The fallback is heard: a COPY refused on every batch would otherwise double each write unseen.
    expect(refused).toHaveLength(1);
    expect(String(refused[0])).toMatch(/duplicate key/);
    // NUL, which Postgres text cannot hold, is stored as U+FFFD (the JSON statement refuses it).
    const nul = { ...row('copy-nul'), error: 'a\u0000b' };
    await insertRequestLog(h.sql, [nul]);
    const [storedNul] = await h.prisma.requestLogEntry.findMany({ where: { requestId: nul.requestId } });
    expect(storedNul?.error).toBe('a\uFFFDb');
    const stored = await h.prisma.requestLogEntry.findMany({
      where: { userId: caller.userId, endpoint: 'chat', projectId: { not: 'copy-nul' } },
    });
    expect(stored).toHaveLength(4);
    const seen = (r: (typeof stored)[number]) => ({ ...r, requestId: '', projectId: '' });
    const [json] = stored.filter((r) => r.projectId === 'json-a');
    for (const r of stored) expect(seen(r)).toEqual(seen(json as (typeof stored)[number]));
    expect(json).toMatchObject({
      userAgent: awkward,
      error: `upstream said: ${awkward}`,
      prompt: awkward,
      answer: '',
      lane: null,
      apiKeyId: null,
      costMicros: 3n,
      latencyMs: 4,
      ttftMs: 0,
      createdAt,
    });
  });

  it('a batch is stored as written: times rounded and never negative, no first token as null', async () => {
    const createdAt = new Date(Date.UTC(2026, 10, 28, 12, 0, 0, 123));
    const row = (latencyMs: number, ttftMs: number | null) => ({
      requestId: randomUUID(),
      userId: caller.userId,
      apiKeyId: caller.apiKeyId,
      projectId: 'rows',
      endpoint: 'stream',
      lane: 'free',
      provider: 'groq',
      model: 'free-a',
      status: 200,
      promptTokens: 3,
      completionTokens: 2,
      cachedTokens: 1,
      costMicros: 7,
      currency: 'USD',
      latencyMs,
      ttftMs,
      userAgent: 'ua',
      error: null,
      attempts: [
        { target: 'groq/free-a', outcome: 'success', status: 200, retry: 0, start_ms: 0, duration_ms: 1 },
      ],
      createdAt,
    });
    const rows = [row(1.6, null), row(-5, 2.4), row(10, -1)];
    await insertRequestLog(prismaSql(h.prisma), rows);
    const stored = await h.prisma.requestLogEntry.findMany({
      where: { projectId: 'rows', userId: caller.userId },
    });
    const byId = new Map(stored.map((r) => [r.requestId, r]));
    expect(rows.map((r) => [byId.get(r.requestId)?.latencyMs, byId.get(r.requestId)?.ttftMs])).toEqual([
      [2, null],
      [0, 2],
      [10, 0],
    ]);
    expect(byId.get(rows[0]?.requestId ?? '')).toMatchObject({
      apiKeyId: caller.apiKeyId,
      cachedTokens: 1,
      costMicros: 7n,
      userAgent: 'ua',
      createdAt,
      attempts: rows[0]?.attempts,
    });
  });

  it('retention removes rows older than the configured days, and only those', async () => {
    const now = Date.now();
    const row = (ageDays: number) => ({
      requestId: randomUUID(),
      userId: caller.userId,
      apiKeyId: null,
      projectId: 'old',
      endpoint: 'chat',
      lane: 'free',
      provider: null,
      model: null,
      status: 200,
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
      costMicros: 0,
      currency: 'USD',
      latencyMs: 1,
      ttftMs: null,
      userAgent: null,
      error: null,
      attempts: [],
      createdAt: new Date(now - ageDays * 86_400_000),
    });
    const old = row(10);
    const recent = row(1);
    await insertRequestLog(prismaSql(h.prisma), [old, recent]);
    const retention = startRequestLogRetention({
      sql: h.sql,
      logger: h.deps.logger,
      retentionDays: 7,
      clock: () => now,
    });
    expect(await retention.runOnce()).toBeGreaterThanOrEqual(1);
    retention.stop();
    const left = await h.prisma.requestLogEntry.findMany({
      where: { projectId: 'old', userId: caller.userId },
    });
    expect(left.map((r) => r.requestId)).toEqual([recent.requestId]);
  });
});
