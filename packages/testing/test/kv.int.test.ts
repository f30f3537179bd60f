import { Redis } from 'ioredis';
import { createTestKv } from '../src/kv';

const redisUrl = process.env.TEST_REDIS_URL;

it('without a Redis URL the test store is in memory', async () => {
  const kv = createTestKv({ url: '' });
  expect(kv.kind).toBe('memory');
  await kv.set('k', 'v');
  expect(await kv.get('k')).toBe('v');
  await kv.close();
});

(redisUrl ? it : it.skip)(
  'on Redis each test store has its own prefix and close() deletes its keys',
  async () => {
    const a = createTestKv();
    const b = createTestKv();
    const admin = new Redis(redisUrl!);
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
  },
);
