import type { RedisKeyValueStore } from '@platform/db';
import { createTestKv, describeWith, needRedis, type TestServer } from '@platform/testing';
import { CountersNotAdjustedError, turnWriterOf } from '../src/batching/redis-turn-writer';

/**
 * The turn writer (batching/redis-turn-writer.ts): the ledger records and
 * budget settles of one event-loop turn in one script call, against a real
 * Redis.
 */
const redis = needRedis();

describeWith(redis)('the turn writer on Redis', () => {
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
  const fresh = (name: string) => `${kv.keyPrefix}turn:${name}:${Date.now()}:${n++}`;

  const entriesOf = async (stream: string) =>
    (await kv.redis.xrange(stream, '-', '+')).map(([, fields]) => JSON.parse(fields[1] ?? '') as unknown);

  it("one turn's appends and adjusts go out as one call: one entry, each counter's deltas summed", async () => {
    const writer = turnWriterOf(kv.redis);
    const [stream, a, b] = [fresh('stream'), fresh('a'), fresh('b')];
    const spy = jest.spyOn(kv.redis as unknown as { moneyTurn: () => Promise<number> }, 'moneyTurn');
    try {
      await Promise.all([
        writer.append(stream, { id: 1 }),
        writer.adjust([
          { key: a, by: 5, ttlMs: 60_000 },
          { key: b, by: -2, ttlMs: 60_000 },
        ]),
        writer.append(stream, { id: 2 }),
        writer.adjust([{ key: a, by: 3, ttlMs: 90_000 }]),
      ]);
      expect(spy.mock.contexts.filter((self) => self === kv.redis)).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
    expect(await entriesOf(stream)).toEqual([[{ id: 1 }, { id: 2 }]]);
    expect(await kv.redis.mget(a, b)).toEqual(['8', '-2']);
    // A new counter gets the longest expiry asked for in the turn.
    const ttl = await kv.redis.pttl(a);
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(90_000);
  });

  it('settles without records touch no stream; records without settles touch no counter', async () => {
    const writer = turnWriterOf(kv.redis);
    const [stream, a] = [fresh('stream'), fresh('a')];
    await writer.adjust([{ key: a, by: 4, ttlMs: 60_000 }]);
    expect(await kv.redis.get(a)).toBe('4');
    expect(await kv.redis.type(a)).toBe('string');
    await writer.append(stream, { id: 3 });
    expect(await entriesOf(stream)).toEqual([[{ id: 3 }]]);
    expect(await kv.redis.get(a)).toBe('4');
  });

  it('a counter that cannot be changed rejects the settles of its turn, never the records', async () => {
    const writer = turnWriterOf(kv.redis);
    const [stream, broken, good] = [fresh('stream'), fresh('broken'), fresh('good')];
    await kv.redis.set(broken, 'not a number');
    const [appended, adjusted] = await Promise.allSettled([
      writer.append(stream, { id: 4 }),
      writer.adjust([
        { key: broken, by: 1, ttlMs: 60_000 },
        { key: good, by: 7, ttlMs: 60_000 },
      ]),
    ]);
    expect(appended.status).toBe('fulfilled');
    expect(adjusted.status === 'rejected' && adjusted.reason).toBeInstanceOf(CountersNotAdjustedError);
    expect(await entriesOf(stream)).toEqual([[{ id: 4 }]]);
    // The other counters of the turn are changed all the same.
    expect(await kv.redis.get(good)).toBe('7');
  });

  it('a failed call rejects everyone of its turn, and the next turn writes anew', async () => {
    const writer = turnWriterOf(kv.redis);
    const [stream, a] = [fresh('stream'), fresh('a')];
    // A stream key that holds a string: the XADD fails, so does the whole call.
    await kv.redis.set(stream, 'not a stream');
    const results = await Promise.allSettled([
      writer.append(stream, { id: 5 }),
      writer.adjust([{ key: a, by: 1, ttlMs: 60_000 }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const other = fresh('stream');
    await writer.append(other, { id: 6 });
    expect(await entriesOf(other)).toEqual([[{ id: 6 }]]);
  });
});
