import type { Options } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { createRateLimitStore } from '../src';
import { storeFactories } from './kv-stores';

describe.each(storeFactories)('createRateLimitStore on $name', (factory) => {
  it('counts hits per key within the window and resets a key', async () => {
    const kv = factory.create();
    const store = createRateLimitStore(kv, { prefix: 'rl:test:' });
    try {
      await store.init?.({ windowMs: 60_000 } as Options);
      await store.increment('ip-1');
      await store.increment('ip-1');
      const third = await store.increment('ip-1');
      expect(third.totalHits).toBe(3);
      expect(third.resetTime?.getTime()).toBeGreaterThan(Date.now());
      expect((await store.increment('ip-2')).totalHits).toBe(1);
      await store.resetKey('ip-1');
      expect((await store.increment('ip-1')).totalHits).toBe(1);
    } finally {
      await store.shutdown?.();
      await factory.drop(kv);
    }
  });
});

const redisFactory = storeFactories.find((f) => f.name === 'redis');

(redisFactory ? it : it.skip)(
  'the Redis-backed store keeps its counters under the key-value store prefix',
  async () => {
    if (!redisFactory) throw new Error('TEST_REDIS_URL is not set');
    const kv = redisFactory.create();
    try {
      const store = createRateLimitStore(kv, { prefix: 'rl:login:' });
      await store.init?.({ windowMs: 60_000 } as Options);
      await store.increment('ip-9');
      const { redis, keyPrefix } = kv as unknown as { redis: Redis; keyPrefix: string };
      expect(await redis.keys(`${keyPrefix}rl:login:*`)).toEqual([`${keyPrefix}rl:login:ip-9`]);
    } finally {
      await redisFactory.drop(kv);
    }
  },
);
