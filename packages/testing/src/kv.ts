import { randomBytes } from 'node:crypto';
import {
  createMemoryStore,
  createRedisStore,
  deletePrefixedKeys,
  type KeyValueStore,
  type RedisKeyValueStore,
} from '@platform/db';
import { testServerUrls } from './servers/env';

export type CreateTestKvOptions = {
  /** Redis server; default TEST_REDIS_URL. Without one, or with '', the in-memory store. */
  url?: string;
  /**
   * Bound on each Redis command. Default: the product's (fast 503s) when `url` names a
   * server of the test's own (fault tests stop it), 5 s on the shared TEST_REDIS_URL
   * (whether given as `url` or by default), so
   * a CPU-starved CI machine slows a test down instead of failing it.
   */
  commandTimeoutMs?: number;
};

/**
 * A KeyValueStore for one test: on TEST_REDIS_URL with a unique key prefix (its
 * close() also deletes every key it wrote), else in memory.
 */
export function createTestKv(options: CreateTestKvOptions = {}): KeyValueStore | RedisKeyValueStore {
  const shared = testServerUrls().redisUrl;
  const url = options.url === undefined ? shared : options.url;
  if (!url) return createMemoryStore();
  const commandTimeoutMs = options.commandTimeoutMs ?? (url === shared ? 5_000 : undefined);
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
