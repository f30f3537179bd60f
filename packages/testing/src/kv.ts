import { randomBytes } from 'node:crypto';
import {
  createMemoryStore,
  createRedisStore,
  type KeyValueStore,
  type RedisKeyValueStore,
} from '@platform/db';

export type CreateTestKvOptions = {
  /** Redis server; default TEST_REDIS_URL. Without one, or with '', the in-memory store. */
  url?: string;
};

/** Deletes every key under the store's prefix, on a connection of its own. */
async function deleteKeys(store: RedisKeyValueStore): Promise<void> {
  const admin = store.redis.duplicate();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${store.keyPrefix}*`, 'COUNT', 500);
      if (keys.length > 0) await admin.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await admin.quit();
  }
}

/**
 * A KeyValueStore for one test: on TEST_REDIS_URL with a unique key prefix (its
 * close() also deletes every key it wrote), else in memory.
 */
export function createTestKv(options: CreateTestKvOptions = {}): KeyValueStore | RedisKeyValueStore {
  const url = options.url === undefined ? process.env.TEST_REDIS_URL : options.url;
  if (!url) return createMemoryStore();
  const store = createRedisStore({ url, keyPrefix: `test:${randomBytes(8).toString('hex')}:` });
  return {
    ...store,
    async close() {
      await store.close();
      await deleteKeys(store);
    },
  };
}
