import { MemoryStore, type Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { type RedisReply, RedisStore } from 'rate-limit-redis';
import { assertRedisReachable } from './kv-redis';
import type { KeyValueStore } from './kv-types';

/** Something that carries a raw ioredis client, like the Redis KeyValueStore. */
export type RedisClientHolder = { redis: Redis; keyPrefix?: string };

function hasRedisClient(source: object): source is RedisClientHolder {
  const redis = (source as { redis?: { call?: unknown } }).redis;
  return typeof redis?.call === 'function';
}

/**
 * rate-limit-redis caches the SHA of its Lua scripts as a promise. When the
 * script has to be reloaded while Redis is unreachable (after a Redis restart
 * empties its script cache), that promise stays rejected and every later call
 * fails with the same old error, long after Redis is back. This store reloads a
 * script whose load failed, so the limiter recovers by itself.
 */
class RecoveringRedisStore extends RedisStore {
  private reloadFailedScripts(): void {
    const retry = (current: Promise<string>, load: () => Promise<string>) =>
      current.then(
        (sha) => sha,
        () => load(),
      );
    this.incrementScriptSha = retry(this.incrementScriptSha, () => this.loadIncrementScript());
    this.getScriptSha = retry(this.getScriptSha, () => this.loadGetScript());
    // A load that fails again is reported by the next call; never as an unhandled rejection.
    this.incrementScriptSha.catch(() => undefined);
    this.getScriptSha.catch(() => undefined);
  }

  override async increment(key: string) {
    try {
      return await super.increment(key);
    } catch (err) {
      this.reloadFailedScripts();
      throw err;
    }
  }

  override async get(key: string) {
    try {
      return await super.get(key);
    } catch (err) {
      this.reloadFailedScripts();
      throw err;
    }
  }
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
  return new RecoveringRedisStore({
    prefix: `${source.keyPrefix ?? ''}${options.prefix ?? 'rl:'}`,
    // ioredis has no sendCommand(...args); call() sends a raw command.
    sendCommand: async (command: string, ...args: string[]) => {
      assertRedisReachable(redis);
      return redis.call(command, ...args) as Promise<RedisReply>;
    },
  });
}
