import { randomBytes } from 'node:crypto';
// Not a declared dependency: @platform/testing depends on this package (see backends.ts).
import { needRedis, needsMet, type TestServer } from '@platform/testing/servers';
import {
  createMemoryStore,
  createRedisStore,
  deletePrefixedKeys,
  type KeyValueStore,
  type RedisKeyValueStore,
} from '../src';

/** Redis: TEST_REDIS_URL, else a private redis-server started when first used. */
const redis = needRedis();
let server: Promise<TestServer> | undefined;
// Registered by the test file that imports this one: its private server goes with its last test.
afterAll(async () => {
  await (await server)?.close();
});

/** Deletes every key under the store's prefix, then closes it. */
export async function dropRedisStore(store: RedisKeyValueStore): Promise<void> {
  await store.close();
  await deletePrefixedKeys(store);
}

export type StoreFactory = {
  name: 'memory' | 'redis';
  create(): Promise<KeyValueStore>;
  drop(store: KeyValueStore): Promise<void>;
};

export const storeFactories: StoreFactory[] = [
  { name: 'memory', create: async () => createMemoryStore(), drop: (store) => store.close() },
  // Where there is no Redis, one skip line says so.
  ...(needsMet(redis)
    ? [
        {
          name: 'redis' as const,
          create: async () => {
            server ??= redis.start();
            const { url } = await server;
            return createRedisStore({ url, keyPrefix: `test:${randomBytes(6).toString('hex')}:` });
          },
          drop: (store: KeyValueStore) => dropRedisStore(store as RedisKeyValueStore),
        },
      ]
    : []),
];
