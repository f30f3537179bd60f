import { randomBytes } from 'node:crypto';
import {
  createMemoryStore,
  createRedisStore,
  deletePrefixedKeys,
  type KeyValueStore,
  type RedisKeyValueStore,
} from '../src';

export const redisUrl = process.env.TEST_REDIS_URL;

/** Deletes every key under the store's prefix, then closes it. */
export async function dropRedisStore(store: RedisKeyValueStore): Promise<void> {
  await store.close();
  await deletePrefixedKeys(store);
}

export type StoreFactory = {
  name: 'memory' | 'redis';
  create(): KeyValueStore;
  drop(store: KeyValueStore): Promise<void>;
};

export const storeFactories: StoreFactory[] = [
  { name: 'memory', create: () => createMemoryStore(), drop: (store) => store.close() },
  ...(redisUrl
    ? [
        {
          name: 'redis' as const,
          create: () =>
            createRedisStore({ url: redisUrl, keyPrefix: `test:${randomBytes(6).toString('hex')}:` }),
          drop: (store: KeyValueStore) => dropRedisStore(store as RedisKeyValueStore),
        },
      ]
    : []),
];
