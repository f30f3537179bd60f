import { MemoryStore, type Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { type RedisReply, RedisStore } from 'rate-limit-redis';
import type { KeyValueStore } from './kv-types';

/** Something that carries a raw ioredis client, like the Redis KeyValueStore. */
export type RedisClientHolder = { redis: Redis; keyPrefix?: string };

function hasRedisClient(source: object): source is RedisClientHolder {
  const redis = (source as { redis?: { call?: unknown } }).redis;
  return typeof redis?.call === 'function';
}

/**
 * A store for one express-rate-limit 8 limiter: rate-limit-redis on the store's
 * Redis client (counters shared by all instances), else express-rate-limit's
 * MemoryStore. Each limiter needs its own store and, on Redis, its own prefix.
 */
export function createRateLimitStore(
  source: KeyValueStore | RedisClientHolder,
  options: { prefix?: string } = {},
): Store {
  if (!hasRedisClient(source)) return new MemoryStore();
  const { redis } = source;
  return new RedisStore({
    prefix: `${source.keyPrefix ?? ''}${options.prefix ?? 'rl:'}`,
    // ioredis has no sendCommand(...args); call() sends a raw command.
    sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
  });
}
