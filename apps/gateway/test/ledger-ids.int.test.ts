import { randomUUID } from 'node:crypto';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { AI_ROUTES, allRoutesEnv } from './support/ai-routes';

/**
 * Issue 39, item 1: the gateway mints every ledger id. A client that sends
 * one `x-request-id` again and again (here in upper case, which the
 * request-id middleware lower-cases) gets one record per answered request,
 * on every AI route; its id is kept as `client_request_id` for correlation.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness(allRoutesEnv, (state) => {
  ({ h, caller } = state);
});

describe.each(AI_ROUTES.map((r) => [r.path, r] as const))(
  'repeated client request ids: %s',
  (_name, route) => {
    it('five answers with one upper-case x-request-id give five records, each with a gateway id', async () => {
      const clientId = randomUUID().toUpperCase();
      const mixed = clientId.slice(0, 18) + clientId.slice(18).toLowerCase();
      for (const id of [clientId, clientId, mixed, clientId, mixed]) {
        const res = await route.send(h.app, caller, 'ids', { 'x-request-id': id });
        expect(res.status).toBe(200);
        expect(res.headers['x-request-id']).toBe(clientId.toLowerCase());
      }
      await h.usage.flush();
      const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
      expect(rows).toHaveLength(5);
      expect(new Set(rows.map((r) => r.requestId)).size).toBe(5);
      expect(rows.every((r) => r.requestId !== clientId.toLowerCase())).toBe(true);
      expect(rows.map((r) => r.clientRequestId)).toEqual(Array(5).fill(clientId.toLowerCase()));
      expect(rows.map((r) => r.endpoint)).toEqual(Array(5).fill(route.endpoint));
      const [sums] = await h.prisma.$queryRaw<{ requests: bigint }[]>`
        SELECT sum(requests)::bigint AS requests FROM usage_daily WHERE user_id = ${caller.userId}::uuid`;
      expect(Number(sums?.requests)).toBe(5);
    });
  },
);

it('a request without x-request-id is recorded under the id the gateway answered with', async () => {
  const route = AI_ROUTES[0];
  if (!route) throw new Error('no route');
  const res = await route.send(h.app, caller, 'ids');
  await h.usage.flush();
  const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId } });
  expect(rows.map((r) => [r.requestId, r.clientRequestId])).toEqual([[res.headers['x-request-id'], null]]);
});
