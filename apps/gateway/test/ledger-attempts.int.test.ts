import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Issue 39, item 5: a failed attempt of a fallback chain that the provider
 * may bill (it timed out after the request was sent: the provider may have
 * generated the answer anyway) is recorded as an attempt with its own
 * outcome, in usage_attempts, for an operator; the user is charged only for
 * the target that answered.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness({ AI_UPSTREAM_TIMEOUT_MS: '1500', AI_RATE_LIMIT_PER_MINUTE: '100000' }, (state) => {
  ({ h, caller } = state);
});

it('a timed-out attempt before the answering target is kept as an attempt, not charged', async () => {
  h.openai.setFor('free-a', { latencyMs: 2000 });
  h.openai.setFor('free-b', { usage: { prompt_tokens: 3, completion_tokens: 4 } });
  const res = await request(h.app)
    .post('/api/v1/ai/chat/completions')
    .set('x-api-key', caller.apiKey)
    .send({ lane: 'free', project_id: 'attempts', messages: [{ role: 'user', content: 'hi' }] });
  expect(res.status).toBe(200);
  await h.usage.flush();
  const records = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
  expect(records).toEqual([
    expect.objectContaining({ provider: 'cerebras', model: 'free-b', status: 200, totalTokens: 7 }),
  ]);
  let attempts: Awaited<ReturnType<typeof h.prisma.usageAttempt.findMany>> = [];
  for (let i = 0; i < 50 && attempts.length === 0; i += 1) {
    attempts = await h.prisma.usageAttempt.findMany({ where: { userId: caller.userId } });
    if (attempts.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  expect(attempts).toEqual([
    expect.objectContaining({
      requestId: records[0]?.requestId,
      apiKeyId: caller.apiKeyId,
      projectId: 'attempts',
      endpoint: 'chat',
      provider: 'groq',
      model: 'free-a',
      outcome: 'timeout',
      status: null,
    }),
  ]);
  // The daily sums hold the answered request only.
  const [sums] = await h.prisma.$queryRaw<{ requests: bigint; cost: bigint }[]>`
    SELECT sum(requests)::bigint AS requests, sum(cost_micros)::bigint AS cost
      FROM usage_daily WHERE user_id = ${caller.userId}::uuid`;
  expect(Number(sums?.requests)).toBe(1);
  expect(Number(sums?.cost)).toBe(Number(records[0]?.costMicros));
});
