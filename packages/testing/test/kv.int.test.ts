import { Redis } from 'ioredis';
import { createTestKv } from '../src/kv';
import { perTestFile } from '../src/per-file';
import { describeWith, isStoppableRedis, needRedis } from '../src/servers';

it('without a Redis URL the test store is in memory', async () => {
  const kv = createTestKv({ url: '' });
  expect(kv.kind).toBe('memory');
  await kv.set('k', 'v');
  expect(await kv.get('k')).toBe('v');
  await kv.close();
});

// Redis: TEST_REDIS_URL (CI), else a private redis-server for this file, else one skip line.
const redis = needRedis();

describeWith(redis)('on Redis', () => {
  const server = perTestFile(redis.start);

  it('each test store has its own prefix and close() deletes its keys', async () => {
    const a = createTestKv({ url: server.url });
    const b = createTestKv({ url: server.url });
    const admin = new Redis(server.url);
    try {
      expect(a.kind).toBe('redis');
      await a.set('shared-name', 'from a');
      expect(await b.get('shared-name')).toBeNull();
      await a.incrWindow('counter', 1, 60_000);
      const prefix = 'keyPrefix' in a ? a.keyPrefix : '';
      expect(await admin.keys(`${prefix}*`)).toHaveLength(2);
      await a.close();
      expect(await admin.keys(`${prefix}*`)).toEqual([]);
    } finally {
      await b.close();
      await admin.quit();
    }
  });

  it("keeps the product's short command time-outs for a server a fault test stops, and only there", async () => {
    const stopped = await needRedis({ private: true }).start();
    try {
      expect(isStoppableRedis(stopped.url)).toBe(true);
      expect(isStoppableRedis(server.url)).toBe(false);
    } finally {
      await stopped.close();
    }
  });
});
