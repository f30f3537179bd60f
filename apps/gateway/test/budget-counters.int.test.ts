import type { RedisKeyValueStore } from '@platform/db';
import { createTestKv, describeWith, needRedis, type TestServer } from '@platform/testing';
import type {
  BudgetCounterStore,
  CounterClaim,
  ReservationGate,
  ReserveResult,
} from '../src/budgets/counter-store';
import { createMemoryCounterStore } from '../src/budgets/counter-store-memory';
import { createRedisCounterStore } from '../src/budgets/counter-store-redis';

/**
 * The Redis counter store's script against the memory store (the reference,
 * one call at a time): concurrent reservations on shared counters get the
 * same answers and leave the same counts, and a gate refusing one
 * reservation counts nothing of it and leaves the others alone.
 */
const redis = needRedis();

describeWith(redis)('the budget counters on Redis', () => {
  let server: TestServer | undefined;
  let kv: RedisKeyValueStore;
  beforeAll(async () => {
    server = await redis.start();
    kv = createTestKv({ url: server.url }) as RedisKeyValueStore;
  });
  afterAll(async () => {
    await kv?.close();
    await server?.close();
  });

  let n = 0;
  const fresh = (name: string) => `${name}:${Date.now()}:${n++}`;
  const claim = (key: string, limit: number, need: number): CounterClaim => ({
    key,
    limit,
    need,
    ttlMs: 60_000,
    // A window that began after either store started keeping counters: a missing counter is unused, not lost.
    windowStartsAt: Date.now() + 3_600_000,
  });

  /** Reservations issued together (all before any is awaited), answered in order. */
  async function together(
    store: BudgetCounterStore,
    calls: Array<[readonly CounterClaim[], number, ReservationGate?]>,
  ): Promise<ReserveResult[]> {
    return Promise.all(calls.map(([claims, minPpm, gate]) => store.reserve(claims, minPpm, gate)));
  }

  it('a counter missing in a window older than the store is rebuilt before anything is admitted', async () => {
    const redisStore = createRedisCounterStore(kv.redis, kv.keyPrefix);
    const memoryStore = createMemoryCounterStore(Date.now, kv);
    for (const [name, store] of [
      ['redis', redisStore],
      ['memory', memoryStore],
    ] as const) {
      const [lost, fine] = [fresh(`lost-${name}`), fresh(`fine-${name}`)];
      // The first counter's window began before the store kept counters (a restart lost it).
      const claims = [{ ...claim(lost, 100, 30), windowStartsAt: 0 }, claim(fine, 100, 30)];
      expect([name, await store.reserve(claims, 0)]).toEqual([name, { ok: false, rebuild: [0] }]);
      // Nothing was counted by the refused call.
      expect(await store.read([lost, fine])).toEqual([0, 0]);
      await store.rebuild(lost, 80, 60_000);
      // A rebuild never overwrites a counter that exists meanwhile.
      await store.rebuild(lost, 5, 60_000);
      expect(await store.reserve(claims, 0)).toEqual({ ok: true, ppm: 666_666 });
      expect(await store.read([lost, fine])).toEqual([100, 20]);
    }
  });

  it('concurrent reservations on shared counters answer as the same reservations one at a time', async () => {
    const redisStore = createRedisCounterStore(kv.redis, kv.keyPrefix);
    const memoryStore = createMemoryCounterStore(Date.now, kv);
    const [a, b] = [fresh('a'), fresh('b')];
    // Two budgets, 100 and 60 left; each call needs 30 of the first and 25 of the second.
    const calls: Array<[readonly CounterClaim[], number]> = Array.from({ length: 5 }, () => [
      [claim(a, 100, 30), claim(b, 60, 25)],
      100_000,
    ]);
    const batched = await together(redisStore, calls);
    const oneByOne: ReserveResult[] = [];
    for (const [claims, minPpm] of calls) {
      oneByOne.push(
        await memoryStore.reserve(
          claims.map((c) => ({ ...c, key: `m:${c.key}` })),
          minPpm,
        ),
      );
    }
    expect(batched).toEqual(oneByOne);
    // Full, full, then 10 of b left: 400,000 ppm of the need, then refused by b (index 1).
    expect(batched).toEqual([
      { ok: true, ppm: 1_000_000 },
      { ok: true, ppm: 1_000_000 },
      { ok: true, ppm: 400_000 },
      { ok: false, index: 1 },
      { ok: false, index: 1 },
    ]);
    const [usedA, usedB] = await redisStore.read([a, b]);
    expect([usedA, usedB]).toEqual([30 + 30 + 12, 60]);
  });

  it("a gate that refuses one of several reservations counts nothing of it and leaves the others' answers", async () => {
    const store = createRedisCounterStore(kv.redis, kv.keyPrefix);
    const budget = fresh('budget');
    const marker = fresh('revoked');
    await kv.set(marker, '1', 60_000);
    const gate = (markerKey: string, max: number): ReservationGate => ({
      markerKey,
      rate: { key: fresh('rate'), max, windowMs: 60_000 },
    });
    const results = await together(store, [
      [[claim(budget, 100, 10)], 0, gate(fresh('not-revoked'), 5)],
      [[claim(budget, 100, 10)], 0, gate(marker, 5)],
      [[claim(budget, 100, 10)], 0, gate(fresh('not-revoked'), 0)],
      [[claim(budget, 100, 10)], 0],
    ]);
    expect(results[0]).toEqual({ ok: true, ppm: 1_000_000 });
    expect(results[1]).toEqual({ ok: false, gate: { refused: 'revoked' } });
    expect(results[2]).toEqual({ ok: false, gate: { refused: 'rate', resetMs: expect.any(Number) } });
    expect(results[3]).toEqual({ ok: true, ppm: 1_000_000 });
    const [used] = await store.read([budget]);
    expect(used).toBe(20);
  });

  it('counters a reserve creates expire with their window; a refused rate hit heals a counter without expiry', async () => {
    const store = createRedisCounterStore(kv.redis, kv.keyPrefix);
    const [budget, marker, rate] = [fresh('ttl-budget'), fresh('ttl-marker'), fresh('ttl-rate')];
    const gate: ReservationGate = { markerKey: marker, rate: { key: rate, max: 2, windowMs: 30_000 } };
    expect(await store.reserve([claim(budget, 100, 10)], 0, gate)).toEqual({ ok: true, ppm: 1_000_000 });
    const [budgetTtl, rateTtl] = await Promise.all([
      kv.redis.pttl(kv.keyPrefix + budget),
      kv.redis.pttl(kv.keyPrefix + rate),
    ]);
    expect(budgetTtl).toBeGreaterThan(50_000);
    expect(budgetTtl).toBeLessThanOrEqual(60_000);
    expect(rateTtl).toBeGreaterThan(20_000);
    expect(rateTtl).toBeLessThanOrEqual(30_000);
    // A rate counter that lost its expiry (e.g. PERSIST by hand) is given one back when it refuses.
    await kv.redis.persist(kv.keyPrefix + rate);
    expect(await store.reserve([claim(budget, 100, 10)], 0, gate)).toEqual({ ok: true, ppm: 1_000_000 });
    const refused = await store.reserve([claim(budget, 100, 10)], 0, gate);
    expect(refused).toEqual({ ok: false, gate: { refused: 'rate', resetMs: 30_000 } });
    expect(await kv.redis.pttl(kv.keyPrefix + rate)).toBeGreaterThan(20_000);
  });
});
