import type { Redis } from 'ioredis';

/** Lost-connection states of ioredis: the link broke, or the first connect failed. */
const DOWN_STATES = new Set(['reconnecting', 'close', 'end']);

/**
 * Fails at once while Redis is known to be down, as the key-value store does
 * (packages/db kv-redis.ts), instead of queueing the command until a
 * reconnect: a request that needs Redis is answered 503 quickly.
 */
export function assertRedisReachable(redis: Redis): void {
  if (DOWN_STATES.has(redis.status)) throw new Error('Connection is closed (redis is unreachable)');
}
