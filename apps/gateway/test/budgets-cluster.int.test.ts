import { freePort } from '@platform/testing';
import {
  describeSpawnedGateway,
  listeningPids,
  spawnService,
  until,
  withUserAndKey,
} from './support/spawned-gateway';

// Item 3 of issue 31 across processes: the built service with WORKERS=2 and a
// second instance (its own process) on the same Postgres and Redis, 40
// concurrent requests of 8 tokens against a 100-token daily budget. Run
// `npm run build` first.

let ports: number[] = [];

describeSpawnedGateway(
  'the budget cluster test (apps/gateway/test/budgets-cluster.int.test.ts)',
  'the built service',
  (s) => {
    beforeAll(async () => {
      const env = { ...s.env, AI_DAILY_TOKEN_BUDGET: '100' };
      ports = [await freePort(), await freePort()];
      const clustered = spawnService({ ...env, WORKERS: '2', PORT: String(ports[0]) });
      s.services.push(clustered);
      await until(() => listeningPids(clustered).length >= 2, 30_000, 'two workers');
      const single = spawnService({ ...env, WORKERS: '1', PORT: String(ports[1]) });
      s.services.push(single);
      await until(() => listeningPids(single).length >= 1, 30_000, 'the second instance');
    }, 60_000);

    it('40 concurrent requests over two workers and a second instance serve at most one answer past 100 tokens', async () => {
      await withUserAndKey(s.database.url, 'budget-cluster', async ({ apiKey }) => {
        s.openai.set({ usage: { prompt_tokens: 4, completion_tokens: 4 }, latencyMs: 50 });
        let served = 0;
        const statuses: number[] = [];
        for (let round = 0; round < 3; round += 1) {
          const answers = await Promise.all(
            Array.from({ length: 40 }, async (_, i) => {
              // A new connection each: the primary hands them to both workers in turn.
              const res = await fetch(`http://127.0.0.1:${ports[i % 2]}/api/v1/ai/chat/completions`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'x-api-key': apiKey, connection: 'close' },
                body: JSON.stringify({
                  lane: 'free',
                  project_id: 'p',
                  max_tokens: 4,
                  messages: [{ role: 'user', content: 'hi' }],
                }),
              });
              const body = (await res.json()) as { usage?: { total_tokens: number } };
              return { status: res.status, tokens: body.usage?.total_tokens ?? 0 };
            }),
          );
          for (const a of answers) {
            statuses.push(a.status);
            if (a.status === 200) served += a.tokens;
          }
        }
        expect(new Set(statuses)).toEqual(new Set([200, 429]));
        expect(served).toBeLessThanOrEqual(100 + 8);
        expect(served).toBeGreaterThanOrEqual(100 - 8);
      });
    }, 60_000);
  },
);
