// Interim until @platform/testing ships createTestDatabase/createTestKv: one fresh
// database per test file (Postgres when TEST_DATABASE_URL is set, else in-memory PGlite)
// and a key-value store with the port's semantics (Redis when TEST_REDIS_URL is set,
// under a random key prefix per store, else in-process).
import { randomBytes } from 'node:crypto';
import { applyMigrations, type Database, type KeyValueStore, openDatabase } from '@platform/db';
import { Redis } from 'ioredis';

export type TestDatabase = { db: Database; adapter: Database['adapter']; drop(): Promise<void> };

export async function createTestDatabase(options: { migrationsDir: string }): Promise<TestDatabase> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const db = await openDatabase({});
    await applyMigrations({ db, migrationsDir: options.migrationsDir });
    return { db, adapter: db.adapter, drop: () => db.close() };
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ url: base });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  await applyMigrations({ db, migrationsDir: options.migrationsDir });
  return {
    db,
    adapter: db.adapter,
    async drop() {
      await db.close();
      await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.close();
    },
  };
}

export function createTestKv(): KeyValueStore {
  const url = process.env.TEST_REDIS_URL;
  return url ? createRedisTestKv(url) : createMemoryTestKv();
}

// Fixed window: the first increment sets the expiry; later ones keep it.
const INCR_WINDOW = `local total = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) end
return {total, ttl}`;

function createRedisTestKv(url: string): KeyValueStore {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const client = new Redis(url, { keyPrefix: prefix, lazyConnect: false, maxRetriesPerRequest: 2 });
  let subscriber: Redis | undefined;
  const handlers = new Map<string, Set<(m: string) => void>>();
  return {
    kind: 'redis',
    get: (key) => client.get(key),
    set: async (key, value, ttlMs) => {
      if (ttlMs) await client.set(key, value, 'PX', ttlMs);
      else await client.set(key, value);
    },
    setIfAbsent: async (key, value, ttlMs) => (await client.set(key, value, 'PX', ttlMs, 'NX')) === 'OK',
    getDel: (key) => client.getdel(key),
    del: async (key) => {
      await client.del(key);
    },
    incrWindow: async (key, by, windowMs) => {
      const [total, resetMs] = (await client.eval(INCR_WINDOW, 1, key, by, windowMs)) as [number, number];
      return { total, resetMs };
    },
    publish: async (channel, message) => {
      await client.publish(prefix + channel, message);
    },
    subscribe: async (channel, onMessage) => {
      if (!subscriber) {
        subscriber = client.duplicate({ keyPrefix: '' });
        subscriber.on('message', (ch: string, message: string) => {
          for (const fn of handlers.get(ch) ?? []) fn(message);
        });
      }
      const full = prefix + channel;
      const set = handlers.get(full) ?? new Set();
      set.add(onMessage);
      handlers.set(full, set);
      await subscriber.subscribe(full);
      return async () => {
        set.delete(onMessage);
      };
    },
    ping: async () => (await client.ping()) === 'PONG',
    close: async () => {
      subscriber?.disconnect();
      await client.quit();
    },
  };
}

function createMemoryTestKv(): KeyValueStore {
  const values = new Map<string, { value: string; expires: number }>();
  const listeners = new Map<string, Set<(m: string) => void>>();
  const live = (key: string) => {
    const entry = values.get(key);
    if (entry && entry.expires <= Date.now()) values.delete(key);
    return values.get(key);
  };
  return {
    kind: 'memory',
    get: async (key) => live(key)?.value ?? null,
    set: async (key, value, ttlMs) => {
      values.set(key, { value, expires: ttlMs ? Date.now() + ttlMs : Number.POSITIVE_INFINITY });
    },
    setIfAbsent: async (key, value, ttlMs) => {
      if (live(key)) return false;
      values.set(key, { value, expires: Date.now() + ttlMs });
      return true;
    },
    getDel: async (key) => {
      const value = live(key)?.value ?? null;
      values.delete(key);
      return value;
    },
    del: async (key) => {
      values.delete(key);
    },
    incrWindow: async (key, by, windowMs) => {
      const entry = live(key) ?? { value: '0', expires: Date.now() + windowMs };
      const total = Number(entry.value) + by;
      values.set(key, { value: String(total), expires: entry.expires });
      return { total, resetMs: entry.expires - Date.now() };
    },
    publish: async (channel, message) => {
      for (const fn of listeners.get(channel) ?? []) fn(message);
    },
    subscribe: async (channel, fn) => {
      const set = listeners.get(channel) ?? new Set();
      set.add(fn);
      listeners.set(channel, set);
      return async () => {
        set.delete(fn);
      };
    },
    ping: async () => true,
    close: async () => undefined,
  };
}
