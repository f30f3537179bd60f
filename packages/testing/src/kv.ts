import { randomBytes } from 'node:crypto';
import {
  createMemoryStore,
  createRedisStore,
  deletePrefixedKeys,
  type KeyValueStore,
  type RedisKeyValueStore,
} from '@platform/db';
import { testServerUrls } from './servers/env';
import { isStoppableRedis } from './servers/redis';

export type CreateTestKvOptions = {
  /** Redis server; default TEST_REDIS_URL. Without one, or with '', the in-memory store. */
  url?: string;
  /**
   * Bound on each Redis command. Default: the product's (fast 503s) on a server a
   * fault test stops (needRedis({ private: true })), else 5 s, so a CPU-starved
   * machine slows a test down instead of failing it.
   */
  commandTimeoutMs?: number;
};

/**
 * A KeyValueStore for one test: on TEST_REDIS_URL with a unique key prefix (its
 * close() also deletes every key it wrote), else in memory.
 */
export function createTestKv(options: CreateTestKvOptions = {}): KeyValueStore | RedisKeyValueStore {
  const url = options.url === undefined ? testServerUrls().redisUrl : options.url;
  if (!url) return createMemoryStore();
  const commandTimeoutMs = options.commandTimeoutMs ?? (isStoppableRedis(url) ? undefined : 5_000);
  const store = createRedisStore({
    url,
    keyPrefix: `test:${randomBytes(8).toString('hex')}:`,
    commandTimeoutMs,
  });
  return {
    ...store,
    async close() {
      await store.close();
      await deletePrefixedKeys(store);
    },
  };
}
