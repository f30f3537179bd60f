import { createMemoryStore, type KeyValueStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createOwnerCache } from './owner-cache';

// The per-owner cache the stored provider keys and the capture settings share:
// one load per owner for concurrent callers, expiry by the injected clock,
// invalidation on every instance, and a failed load not kept.

const settle = () => new Promise((r) => setImmediate(r));

function instance(kv: KeyValueStore, clock: () => number, load: (owner: string) => Promise<string>) {
  const loads: string[] = [];
  const cache = createOwnerCache({
    kv,
    logger: createLogger({ service: 'test', level: 'warn', destination: createMemoryDestination() }),
    clock,
    channel: 'test:owner-cache',
    ttlMs: 1_000,
    load: (owner) => {
      loads.push(owner);
      return load(owner);
    },
  });
  return { cache, loads };
}

describe('owner cache', () => {
  it('shares one load among concurrent callers and reads again after the TTL', async () => {
    const kv = createMemoryStore();
    // Not 0: lru-cache takes a start time of 0 for "no TTL".
    let now = 5_000;
    const a = instance(
      kv,
      () => now,
      async (owner) => `value of ${owner}`,
    );
    const [x, y] = await Promise.all([a.cache.get('u1'), a.cache.get('u1')]);
    expect([x, y]).toEqual(['value of u1', 'value of u1']);
    expect(a.loads).toEqual(['u1']);
    now = 5_999;
    await a.cache.get('u1');
    expect(a.loads).toEqual(['u1']);
    now = 6_001;
    await a.cache.get('u1');
    expect(a.loads).toEqual(['u1', 'u1']);
    await a.cache.close();
    await kv.close();
  });

  it("drops an owner's entry on every instance when one invalidates it, and no other owner's", async () => {
    const kv = createMemoryStore();
    const clock = () => 0;
    const a = instance(kv, clock, async (owner) => owner);
    const b = instance(kv, clock, async (owner) => owner);
    await settle();
    await Promise.all([a.cache.get('u1'), b.cache.get('u1'), b.cache.get('u2')]);
    await a.cache.invalidate('u1');
    await settle();
    await Promise.all([a.cache.get('u1'), b.cache.get('u1'), b.cache.get('u2')]);
    expect(a.loads).toEqual(['u1', 'u1']);
    expect(b.loads).toEqual(['u1', 'u2', 'u1']);
    await a.cache.close();
    await b.cache.close();
    await kv.close();
  });

  it('does not keep a failed load: the next caller reads again', async () => {
    const kv = createMemoryStore();
    let fail = true;
    const a = instance(
      kv,
      () => 0,
      async (owner) => {
        if (fail) throw new Error('database down');
        return owner;
      },
    );
    await expect(a.cache.get('u1')).rejects.toThrow('database down');
    fail = false;
    await expect(a.cache.get('u1')).resolves.toBe('u1');
    expect(a.loads).toEqual(['u1', 'u1']);
    await a.cache.close();
    await kv.close();
  });
});
