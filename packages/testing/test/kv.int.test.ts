import { Redis } from 'ioredis';
import { createTestKv } from '../src/kv';
import { describeUnless, onPath, type PrivateServer, startPrivateRedis } from '../src/private-servers';

it('without a Redis URL the test store is in memory', async () => {
  const kv = createTestKv({ url: '' });
  expect(kv.kind).toBe('memory');
  await kv.set('k', 'v');
  expect(await kv.get('k')).toBe('v');
  await kv.close();
});

// Redis: TEST_REDIS_URL (CI), else a private redis-server for this file, else one skip line.
const describeWithRedis = describeUnless(
  process.env.TEST_REDIS_URL || onPath('redis-server') ? undefined : 'needs TEST_REDIS_URL or redis-server',
  'the Redis test store (packages/testing/test/kv.int.test.ts)',
);

describeWithRedis('on Redis', () => {
  let privateRedis: PrivateServer | undefined;
  let redisUrl = '';
  beforeAll(async () => {
    if (process.env.TEST_REDIS_URL) redisUrl = process.env.TEST_REDIS_URL;
    else {
      privateRedis = await startPrivateRedis();
      redisUrl = privateRedis.url;
    }
  });
  afterAll(async () => {
    await privateRedis?.close();
  });

  it('each test store has its own prefix and close() deletes its keys', async () => {
    const a = createTestKv({ url: redisUrl });
    const b = createTestKv({ url: redisUrl });
    const admin = new Redis(redisUrl);
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
});
