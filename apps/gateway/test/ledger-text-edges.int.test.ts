import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { AI_ROUTES, allRoutesEnv } from './support/ai-routes';

/**
 * Issue 39, item 8: text Postgres cannot store (a lone UTF-16 surrogate, a
 * NUL) is refused at the edge of every route that writes it (400 validation
 * failed, naming the field), and never stops the ledger: after bad text in
 * every text field of every AI, budget and usage route, ordinary requests'
 * records all arrive, and every answered request has exactly one record.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness(allRoutesEnv, (state) => {
  ({ h, caller } = state);
});

const BAD = { 'lone surrogate': 'p\ud800', NUL: 'p\u0000q' } as const;

/** Every path to a string in a JSON body (e.g. `messages.0.content`). */
function stringPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...at, i]));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...at, k]));
  return [];
}

function withText(body: object, path: (string | number)[], text: string): object {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path.at(-1) as string | number] = text;
  return copy;
}

/** The JSON body (Buffer bodies of audio answers are not JSON). */
const jsonOf = (res: request.Response): Record<string, unknown> =>
  res.type === 'application/json' ? (res.body as Record<string, unknown>) : {};

it('bad text in every field of every AI route: no 500, project ids refused, every answer recorded once', async () => {
  const answered: string[] = [];
  const refused: string[] = [];
  for (const route of AI_ROUTES) {
    const body = route.body('edge');
    for (const [what, text] of Object.entries(BAD)) {
      for (const path of stringPaths(body)) {
        const id = randomUUID();
        const res = await request(h.app)
          .post(route.path)
          .set('x-api-key', caller.apiKey)
          .set('x-request-id', id)
          .set('x-project-id', 'edge')
          .send(withText(body, path, text));
        const name = `${route.path} ${path.join('.')} (${what})`;
        expect([name, res.status < 500]).toEqual([name, true]);
        if (path.join('.') === 'project_id') {
          expect([name, res.status, jsonOf(res).error]).toEqual([name, 400, 'validation failed']);
          expect(jsonOf(res).request_id).toBe(id);
          expect(jsonOf(res).details).toEqual([
            { path: 'project_id', message: 'must not contain NUL or unpaired UTF-16 surrogates' },
          ]);
        }
        (res.status === 200 ? answered : refused).push(id);
      }
    }
  }
  // Then ordinary requests on every route: all answered, all recorded.
  for (const route of AI_ROUTES) {
    const id = randomUUID();
    const res = await route.send(h.app, caller, 'after', { 'x-request-id': id });
    expect([route.path, res.status]).toEqual([route.path, 200]);
    answered.push(id);
  }
  await h.usage.flush();
  const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
  const byClientId = new Map<string, number>();
  for (const r of rows)
    byClientId.set(r.clientRequestId ?? '', (byClientId.get(r.clientRequestId ?? '') ?? 0) + 1);
  expect(answered.filter((id) => byClientId.get(id) !== 1)).toEqual([]);
  expect(rows.filter((r) => r.status === 500)).toEqual([]);
  // The daily sums hold exactly the records.
  const [sums] = await h.prisma.$queryRaw<{ requests: bigint; tokens: bigint; cost: bigint }[]>`
    SELECT sum(requests)::bigint AS requests, sum(total_tokens)::bigint AS tokens, sum(cost_micros)::bigint AS cost
      FROM usage_daily WHERE user_id = ${caller.userId}::uuid`;
  expect({
    requests: Number(sums?.requests),
    tokens: Number(sums?.tokens),
    cost: Number(sums?.cost),
  }).toEqual({
    requests: rows.length,
    tokens: rows.reduce((s, r) => s + r.totalTokens, 0),
    cost: rows.reduce((s, r) => s + Number(r.costMicros), 0),
  });
  expect(answered.length).toBeGreaterThan(AI_ROUTES.length);
  expect(refused.length).toBeGreaterThan(0);
});

describe('budget and usage routes', () => {
  for (const [what, text] of Object.entries(BAD)) {
    it(`refuse a ${what} in a subject or project id with 400, storing nothing`, async () => {
      const put = await request(h.app)
        .put('/api/v1/budgets')
        .set('x-api-key', caller.apiKey)
        .send({ scope: 'project', subject: text, period: 'daily', unit: 'tokens', limit: 100 });
      expect(put.status).toBe(400);
      expect(put.body).toEqual({
        error: 'validation failed',
        code: 'validation_failed',
        request_id: put.headers['x-request-id'],
        details: expect.arrayContaining([expect.objectContaining({ path: 'subject' })]),
      });
      // A URL carries UTF-8: a lone surrogate's bytes (CESU-8) decode to U+FFFD, a NUL stays a NUL.
      const raw = what === 'NUL' ? 'p%00q' : 'p%ED%A0%80';
      for (const scope of ['user', 'api_key', 'project']) {
        const del = await request(h.app)
          .delete(`/api/v1/budgets?scope=${scope}&subject=${raw}&period=daily&unit=tokens`)
          .set('x-api-key', caller.apiKey);
        expect([scope, del.status]).toEqual([scope, what === 'NUL' || scope !== 'project' ? 400 : 404]);
      }
      const usage = await request(h.app)
        .get(`/api/v1/usage?project_id=${raw}`)
        .set('x-api-key', caller.apiKey);
      expect(usage.status).toBe(what === 'NUL' ? 400 : 200);
      if (what === 'NUL')
        expect(usage.body.details).toEqual([
          { path: 'project_id', message: 'must not contain NUL or unpaired UTF-16 surrogates' },
        ]);
      expect(await h.prisma.budget.count({ where: { userId: caller.userId } })).toBe(0);
      // And the ordinary calls still work.
      const ok = await request(h.app)
        .put('/api/v1/budgets')
        .set('x-api-key', caller.apiKey)
        .send({ scope: 'project', subject: 'fine', period: 'daily', unit: 'tokens', limit: 100 });
      expect(ok.status).toBe(200);
    });
  }
});
