import type { RedisKeyValueStore } from './kv-redis';

/**
 * Deletes every key under the store's prefix, on a connection of its own (so
 * it works after the store was closed). For throw-away stores: tests, tools.
 */
export async function deletePrefixedKeys(store: RedisKeyValueStore): Promise<void> {
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
