import { Redis, type RedisOptions } from 'ioredis';
import type { DbLogger } from './database-types';
import { checkIncrement, checkTtl } from './kv-checks';
import type { KeyValueStore } from './kv-types';
import { tolerateLoopLagInCommandTimeouts } from './redis-lag-tolerant-timeout';
import { batchWritesWhileRepliesOwed } from './redis-write-batching';

/** A KeyValueStore on Redis; `redis` is the raw client (tests use it to clean up their keys). */
export type RedisKeyValueStore = KeyValueStore & {
  readonly kind: 'redis';
  readonly redis: Redis;
  /** Prepended to every key and channel of this store. */
  readonly keyPrefix: string;
};

export type RedisStoreOptions = {
  /** redis:// or rediss:// URL. */
  url: string;
  keyPrefix?: string;
  logger?: DbLogger;
  /** Bound on ping(), so a health probe answers even when Redis hangs; default 2 s. */
  pingTimeoutMs?: number;
  /** Bound on every command while Redis hangs; default 750 ms. */
  commandTimeoutMs?: number;
};

// INCRBY, then start the window only if the key has no expiry yet (first hit, or a
// key written without TTL), all in one atomic step. PEXPIRE NX would need Redis 7.
const INCR_WINDOW_LUA = `
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {total, ttl}
`;

type WithIncrWindow = Redis & {
  incrWindow(key: string, by: number, windowMs: number): Promise<[number, number]>;
};

/**
 * While Redis hangs, a command fails within `commandTimeoutMs` instead of waiting
 * for ever (a timer the busy event loop ran late waits again, up to 4 time-outs:
 * redis-lag-tolerant-timeout.ts), so a request that needs Redis is answered 503
 * quickly (a rate-limited request may need two commands); reconnects keep being
 * tried every second at most, so the service recovers by itself when Redis
 * returns.
 */
function redisClientOptions(options: RedisStoreOptions): RedisOptions {
  const commandTimeout = options.commandTimeoutMs ?? 750;
  return {
    maxRetriesPerRequest: 1,
    // Batched by batchWritesWhileRepliesOwed instead (redis-write-batching.ts): under
    // load the scripts of many requests share a syscall and a round trip, and a lone
    // command goes out at once.
    enableAutoPipelining: false,
    commandTimeout,
    connectTimeout: commandTimeout,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
}

/** Lost-connection states: the link was up and broke, or the first connect failed. */
const DOWN_STATES = new Set(['reconnecting', 'close', 'end']);

/**
 * Fails at once while the connection is known to be down, instead of queueing
 * the command until a reconnect; commands issued while the first connection is
 * still being made are queued as usual, so start-up order does not matter.
 */
function assertRedisReachable(redis: Redis): void {
  if (DOWN_STATES.has(redis.status)) throw new Error('Connection is closed (redis is unreachable)');
}

function describe(err: unknown): { message: string } {
  return { message: err instanceof Error ? err.message : String(err) };
}

/** KeyValueStore on Redis (ioredis). Pub/sub opens a second connection on first subscribe. */
export function createRedisStore(options: RedisStoreOptions): RedisKeyValueStore {
  const prefix = options.keyPrefix ?? '';
  tolerateLoopLagInCommandTimeouts();
  const redis = new Redis(options.url, redisClientOptions(options)) as WithIncrWindow;
  redis.defineCommand('incrWindow', { numberOfKeys: 1, lua: INCR_WINDOW_LUA });
  batchWritesWhileRepliesOwed(redis);
  redis.on('error', (err) => options.logger?.warn({ err: describe(err) }, 'redis connection error'));
  const k = (key: string) => prefix + key;

  let subscriber: Redis | undefined;
  const handlers = new Map<string, Set<(message: string) => void>>();
  function getSubscriber(): Redis {
    if (!subscriber) {
      subscriber = redis.duplicate();
      subscriber.on('error', (err) => options.logger?.warn({ err: describe(err) }, 'redis subscriber error'));
      subscriber.on('message', (channel: string, message: string) => {
        for (const handler of handlers.get(channel) ?? []) {
          try {
            handler(message);
          } catch (err) {
            options.logger?.warn({ err: describe(err), channel }, 'subscriber handler threw');
          }
        }
      });
    }
    return subscriber;
  }

  return {
    kind: 'redis',
    redis,
    keyPrefix: prefix,
    async get(key) {
      assertRedisReachable(redis);
      return redis.get(k(key));
    },
    async set(key, value, ttlMs) {
      assertRedisReachable(redis);
      if (ttlMs === undefined) await redis.set(k(key), value);
      else await redis.set(k(key), value, 'PX', checkTtl(ttlMs));
    },
    async setIfAbsent(key, value, ttlMs) {
      assertRedisReachable(redis);
      return (await redis.set(k(key), value, 'PX', checkTtl(ttlMs), 'NX')) === 'OK';
    },
    async getDel(key) {
      assertRedisReachable(redis);
      return redis.getdel(k(key));
    },
    async del(key) {
      assertRedisReachable(redis);
      await redis.del(k(key));
    },
    async incrWindow(key, by, windowMs) {
      assertRedisReachable(redis);
      const [total, resetMs] = await redis.incrWindow(
        k(key),
        checkIncrement(by),
        checkTtl(windowMs, 'windowMs'),
      );
      return { total: Number(total), resetMs: Number(resetMs) };
    },
    async publish(channel, message) {
      assertRedisReachable(redis);
      await redis.publish(k(channel), message);
    },
    async subscribe(channel, onMessage) {
      const name = k(channel);
      const handler = (message: string) => onMessage(message);
      let set = handlers.get(name);
      if (!set) {
        set = new Set();
        handlers.set(name, set);
      }
      set.add(handler);
      await getSubscriber().subscribe(name);
      const current = set;
      return async () => {
        current.delete(handler);
        if (current.size === 0 && handlers.get(name) === current) {
          handlers.delete(name);
          await subscriber?.unsubscribe(name);
        }
      };
    },
    async ping() {
      if (DOWN_STATES.has(redis.status)) return false;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), options.pingTimeoutMs ?? 2000);
        timer.unref();
      });
      const pong = redis.ping().then(
        (reply) => reply === 'PONG',
        () => false,
      );
      return Promise.race([pong, timeout]).finally(() => clearTimeout(timer));
    },
    async close() {
      handlers.clear();
      await Promise.all(
        [redis, subscriber].map(async (client) => {
          if (!client || client.status === 'end') return;
          await client.quit().catch(() => client.disconnect());
        }),
      );
    },
  };
}
