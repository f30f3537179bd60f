import request from 'supertest';
import { insertTeam } from '../src/teams/repo';
import { type AiHarness, PUBLIC_URL, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Item 5 of issue 42 (gateway side): a team key's usage is the team's: its
 * ledger records carry the team's billing subject (what the usage feed and
 * payment bill by, one customer per subject), its budgets apply, not the
 * member's; the key's rules apply as on a personal key.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness({ AI_RATE_LIMIT_PER_MINUTE: '1000' }, (state) => {
  ({ h, caller } = state);
});

const body = { lane: 'free', project_id: 'team-proj', messages: [{ role: 'user', content: 'hi' }] };
const asOwner = (method: 'post' | 'put', path: string) =>
  request(h.app)[method](path).set('Cookie', caller.cookie).set('Origin', PUBLIC_URL);

describe('team keys bill the team', () => {
  it("records usage under the team's subject, counts the team's budget, keeps the member's own usage apart", async () => {
    const team = await insertTeam(h.prisma, 'billing', caller.userId);
    const created = await asOwner('post', `/api/v1/teams/${team.id}/api-keys`).send({
      name: 'teamkey',
      rules: { models: ['groq/free-a'] },
    });
    expect(created.status).toBe(201);
    h.openai.set({ usage: { prompt_tokens: 6, completion_tokens: 6 } });
    const chat = (key: string) =>
      request(h.app).post('/api/v1/ai/chat/completions').set('x-api-key', key).send(body);
    expect((await chat(created.body.key)).status).toBe(200);
    expect((await chat(caller.apiKey)).status).toBe(200);
    await h.usage.flush();

    const teamRows = await h.prisma.usageRecord.findMany({ where: { userId: team.subjectUserId } });
    expect(teamRows.map((r) => [r.apiKeyId, r.totalTokens])).toEqual([[created.body.key_id, 12]]);
    const ownRows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
    expect(ownRows.map((r) => r.apiKeyId)).toEqual([caller.apiKeyId]);

    // The team's daily token budget (30) holds the team key; the member's own key is not under it.
    const set = await asOwner('put', `/api/v1/teams/${team.id}/budgets`).send({
      scope: 'user',
      subject: '',
      period: 'daily',
      unit: 'tokens',
      limit: 30,
    });
    expect(set.status).toBe(200);
    expect((await chat(created.body.key)).status).toBe(200);
    const refused = await chat(created.body.key);
    expect(refused.status).toBe(429);
    expect(refused.body.details[0].path).toBe('budget.user.daily.tokens');
    expect((await chat(caller.apiKey)).status).toBe(200);

    const spend = await request(h.app).get(`/api/v1/teams/${team.id}/budgets`).set('Cookie', caller.cookie);
    expect(spend.body.today.total_tokens).toBe(24);
    await h.usage.flush();
    const usage = await request(h.app).get(`/api/v1/teams/${team.id}/usage`).set('Cookie', caller.cookie);
    expect(usage.status).toBe(200);
    const rows = usage.body.usage as { project_id: string; total_tokens: number; requests: number }[];
    expect(rows.map((r) => r.project_id)).toEqual(['team-proj']);
    expect(rows[0]?.requests).toBe(2);
    expect(rows.reduce((sum, r) => sum + r.total_tokens, 0)).toBe(24);
  });
});
