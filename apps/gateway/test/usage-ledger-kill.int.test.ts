import { freePort } from '@platform/testing';
import { Redis } from 'ioredis';
import {
  describeSpawnedGateway,
  listeningPids,
  spawnService,
  until,
  withUserAndKey,
} from './support/spawned-gateway';
import { parseSse } from './support/sse';

// Item 2 of issue 31, from outside: the built service (`node dist/main.js`)
// with WORKERS=2 on Postgres and a private Redis, under a load of
// completions and streams. A worker is killed with SIGKILL, then the whole
// service (its process group); after a restart every answer a client
// received in full has exactly one record, the daily sums count each once,
// and the only other records are of requests that were cut by the kills.
// Run `npm run build` first.

let env: Record<string, string>;

describeSpawnedGateway(
  'the ledger kill test (apps/gateway/test/usage-ledger-kill.int.test.ts)',
  'the built service',
  (s) => {
    beforeAll(async () => {
      env = {
        ...s.env,
        PORT: String(await freePort()),
        WORKERS: '2',
        // Entries a killed worker had read are taken over after 1 s instead of 30.
        USAGE_LEDGER_CLAIM_IDLE_MS: '1000',
      };
    });

    /** One request; its request id and whether the client received the whole answer. */
    async function call(
      port: number,
      apiKey: string,
      i: number,
    ): Promise<{ id: string | null; complete: boolean }> {
      const stream = i % 2 === 1;
      let id: string | null = null;
      try {
        const res = await fetch(
          `http://127.0.0.1:${port}/api/v1/ai/chat/${stream ? 'stream' : 'completions'}`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey, connection: 'close' },
            body: JSON.stringify({
              lane: 'free',
              project_id: 'kill',
              messages: [{ role: 'user', content: `n${i}` }],
            }),
          },
        );
        id = res.headers.get('x-request-id');
        const text = await res.text();
        if (res.status !== 200) return { id, complete: false };
        if (stream) return { id, complete: parseSse(text).events.at(-1)?.event === 'done' };
        return { id, complete: (JSON.parse(text) as { content?: string }).content !== undefined };
      } catch {
        return { id, complete: false };
      }
    }

    it('SIGKILL of a worker and of the whole service: one record per answer received, none doubled', async () => {
      s.openai.set({
        chunks: ['a', 'b', 'c', 'd'],
        chunkDelayMs: 30,
        latencyMs: 20,
        usage: { prompt_tokens: 2, completion_tokens: 4 },
      });
      const port = Number(env.PORT);
      const first = spawnService(env);
      s.services.push(first);
      await until(() => listeningPids(first).length >= 2, 30_000, 'two workers').catch((e: Error) => {
        throw new Error(`${e.message}\n${first.output()}`);
      });

      await withUserAndKey(s.database.url, 'kill', async ({ prisma, userId, apiKey }) => {
        const results: { id: string | null; complete: boolean }[] = [];
        let stop = false;
        let n = 0;
        const load = () =>
          Array.from({ length: 8 }, async () => {
            while (!stop) results.push(await call(port, apiKey, n++));
          });

        let clients = load();
        await new Promise((r) => setTimeout(r, 1500));
        const [victim] = listeningPids(first);
        process.kill(victim as number, 'SIGKILL');
        await until(() => listeningPids(first).length >= 3, 30_000, 'a replacement worker');
        await new Promise((r) => setTimeout(r, 1500));
        process.kill(-(first.child.pid as number), 'SIGKILL');
        await first.exited;
        stop = true;
        await Promise.all(clients);

        const second = spawnService(env);
        s.services.push(second);
        await until(() => listeningPids(second).length >= 2, 30_000, 'the restart');
        // A little load on the restarted service too.
        stop = false;
        clients = load();
        await new Promise((r) => setTimeout(r, 500));
        stop = true;
        await Promise.all(clients);

        // Drained: nothing left in the stream (entries are deleted once committed).
        const redis = new Redis(s.redis.url);
        try {
          await until(
            async () => (await redis.xlen('gateway:usage:ledger')) === 0,
            30_000,
            'the ledger to drain',
          );
        } finally {
          redis.disconnect();
        }

        const complete = results.filter((r) => r.complete).map((r) => r.id as string);
        const cut = results.filter((r) => !r.complete);
        expect(complete.length).toBeGreaterThan(50);
        const rows = await prisma.usageRecord.findMany({ where: { userId: userId } });
        const recorded = new Set(rows.map((r) => r.requestId));
        expect(complete.filter((id) => !recorded.has(id))).toEqual([]);
        // One row per request id (also a unique index), and the daily sums counted each row once.
        expect(recorded.size).toBe(rows.length);
        const [sums] = await prisma.$queryRaw<{ requests: bigint; tokens: bigint }[]>`
      SELECT sum(requests)::bigint AS requests, sum(total_tokens)::bigint AS tokens
        FROM usage_daily WHERE user_id = ${userId}::uuid`;
        expect(Number(sums?.requests)).toBe(rows.length);
        expect(Number(sums?.tokens)).toBe(rows.reduce((s, r) => s + r.totalTokens, 0));
        // The only records beyond the answers received are of requests the kills cut.
        const completeSet = new Set(complete);
        const extras = rows.filter((r) => !completeSet.has(r.requestId));
        expect(extras.length).toBeLessThanOrEqual(cut.length);
        // Those whose headers had arrived are known by id: each extra with one is among them.
        const cutIds = new Set(cut.map((r) => r.id).filter((id) => id !== null));
        const known = new Set(results.map((r) => r.id).filter((id) => id !== null));
        for (const extra of extras)
          if (known.has(extra.requestId)) expect(cutIds.has(extra.requestId)).toBe(true);
      });
    }, 120_000);
  },
);
