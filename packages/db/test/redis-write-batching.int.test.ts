import { randomBytes } from 'node:crypto';
// Not a declared dependency: @platform/testing depends on this package (see backends.ts).
import { describeWith, needRedis, type TestServer } from '@platform/testing/servers';
import { createRedisStore, deletePrefixedKeys, type RedisKeyValueStore } from '../src';
import { busyScript } from './redis-busy';

const redisNeed = needRedis();

const BUSY_100_MS = busyScript(100);

/** The syscalls a socket makes to write: its handle's write methods, counted. */
function countWrites(socket: unknown): { readonly count: number } {
  const handle = (socket as { _handle: Record<string, (...args: unknown[]) => unknown> })._handle;
  const counter = { count: 0 };
  for (const name of ['writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String', 'writeAsciiString']) {
    const original = handle[name];
    if (typeof original !== 'function') continue;
    handle[name] = function (this: unknown, ...args: unknown[]) {
      counter.count += 1;
      return original.apply(this, args);
    };
  }
  return counter;
}

describeWith(redisNeed)('Redis writes batched while replies are owed (redis-write-batching.ts)', () => {
  let server: TestServer;
  let store: RedisKeyValueStore;
  /** A key of this test's store, for commands sent on the raw client. */
  const key = (name: string) => `${store.keyPrefix}wb:${name}`;

  beforeAll(async () => {
    server = await redisNeed.start();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    store = createRedisStore({ url: server.url, keyPrefix: `test:${randomBytes(6).toString('hex')}:` });
    await store.redis.ping();
  });
  afterEach(async () => {
    await store.close();
    await deletePrefixedKeys(store);
  });

  it('writes what one event-loop turn issues in one syscall when the turn ends', async () => {
    const redis = store.redis;
    const writes = countWrites(redis.stream);
    const replies = Array.from({ length: 500 }, () => redis.incr(key('turn')));
    expect(redis.stream.writableCorked).toBe(1);
    expect(writes.count).toBe(0);
    await new Promise(setImmediate);
    expect(writes.count).toBe(1);
    expect(redis.stream.writableCorked).toBe(0);
    expect(await Promise.all(replies)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(writes.count).toBe(1);
  });

  it('holds what later turns issue while a reply is owed, then writes it together, in order', async () => {
    const redis = store.redis;
    const writes = countWrites(redis.stream);
    // A script that keeps Redis busy for 100 ms: its reply is owed across several turns.
    const slow = redis.eval(BUSY_100_MS, 0);
    await new Promise(setImmediate);
    expect(writes.count).toBe(1);
    const first = Array.from({ length: 100 }, () => redis.incr(key('owed')));
    await new Promise(setImmediate);
    const second = Array.from({ length: 100 }, () => redis.incr(key('owed')));
    await new Promise(setImmediate);
    expect(redis.stream.writableCorked).toBe(1);
    expect(writes.count).toBe(1);
    expect(await slow).toBe(1);
    expect(await Promise.all([...first, ...second])).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    // The script alone, then the 200 increments of two turns in one write.
    expect(writes.count).toBe(2);
    expect(redis.stream.writableCorked).toBe(0);
  });

  it('keeps order around a MULTI and scripts, and answers every command', async () => {
    const redis = store.redis;
    const a = redis.incr(key('mixed'));
    const tx = redis.multi().incr(key('mixed')).incr(key('mixed')).exec();
    const b = redis.eval('return redis.call("INCR", KEYS[1])', 1, key('mixed'));
    const c = store.incrWindow('wb:mixed', 1, 60_000);
    expect(await a).toBe(1);
    expect(await tx).toEqual([
      [null, 2],
      [null, 3],
    ]);
    expect(await b).toBe(4);
    expect((await c).total).toBe(5);
  });

  it('answers a MULTI and a pipeline issued while a reply is owed, held with the rest', async () => {
    const redis = store.redis;
    const writes = countWrites(redis.stream);
    const slow = redis.eval(BUSY_100_MS, 0);
    await new Promise(setImmediate);
    const before = redis.incr(key('held'));
    const tx = redis.multi().incr(key('held')).incr(key('held')).exec();
    const piped = redis.pipeline().incr(key('held')).exec();
    const after = redis.incr(key('held'));
    await new Promise(setImmediate);
    expect(redis.stream.writableCorked).toBe(1);
    expect(await slow).toBe(1);
    expect(await before).toBe(1);
    expect(await tx).toEqual([
      [null, 2],
      [null, 3],
    ]);
    expect(await piped).toEqual([[null, 4]]);
    expect(await after).toBe(5);
    // The script, then everything held behind it in one write.
    expect(writes.count).toBe(2);
    expect(redis.stream.writableCorked).toBe(0);
  }, 5_000);

  it('holds nothing after the connection drops with commands held: the next ones are answered', async () => {
    const redis = store.redis;
    const admin = redis.duplicate();
    try {
      const id = await redis.client('ID');
      // A reply owed, commands held behind it, then the connection is killed under them.
      const owed = redis.eval(BUSY_100_MS, 0);
      await new Promise(setImmediate);
      const held = Array.from({ length: 20 }, () => redis.incr(key('drop')));
      await new Promise(setImmediate);
      expect(redis.stream.writableCorked).toBe(1);
      await admin.client('KILL', 'ID', String(id));
      await Promise.allSettled([owed, ...held]);
      // After the reconnect, commands are written and answered as before.
      const before = Number(await admin.get(key('drop')));
      const after = await Promise.all(Array.from({ length: 5 }, () => redis.incr(key('drop'))));
      expect(after).toEqual([1, 2, 3, 4, 5].map((n) => before + n));
      expect(redis.stream.writableCorked).toBe(0);
    } finally {
      admin.disconnect();
    }
  });
});
