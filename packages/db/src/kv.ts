import type { DbLogger } from './database-types';
import { createMemoryStore } from './kv-memory';
import { createRedisStore, type RedisKeyValueStore } from './kv-redis';
import type { KeyValueStore } from './kv-types';

export type KeyValueStoreOptions = {
  /** redis:// URL; without it the store is in-process (single instance only). */
  url?: string;
  keyPrefix?: string;
  logger?: DbLogger;
  /** Redis only: bound on every command while Redis hangs (RedisStoreOptions); default 750 ms. */
  commandTimeoutMs?: number;
};

/** Redis when a URL is given, else the in-process store. */
export function createKeyValueStore(options: KeyValueStoreOptions = {}): KeyValueStore | RedisKeyValueStore {
  if (options.url)
    return createRedisStore({
      url: options.url,
      keyPrefix: options.keyPrefix,
      logger: options.logger,
      commandTimeoutMs: options.commandTimeoutMs,
    });
  return createMemoryStore();
}
