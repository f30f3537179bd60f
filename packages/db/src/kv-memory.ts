import { checkIncrement, checkTtl } from './kv-checks';
import type { KeyValueStore } from './kv-types';

type Entry = { value: string; expiresAt: number | null };

export type MemoryStoreOptions = {
  /** Clock, for tests that move time; default Date.now. */
  now?: () => number;
  /** How often expired keys are swept out; default 30 s. */
  sweepIntervalMs?: number;
};

/**
 * In-process KeyValueStore with the same semantics as the Redis one, for a single
 * instance (embedded default) and tests. Expired keys vanish on read and are swept
 * periodically by an unref'd timer, so the store never keeps a process alive.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): KeyValueStore {
  const now = options.now ?? Date.now;
  const data = new Map<string, Entry>();
  const channels = new Map<string, Set<(message: string) => void>>();
  let closed = false;

  const sweep = setInterval(() => {
    const t = now();
    for (const [key, entry] of data) if (entry.expiresAt !== null && entry.expiresAt <= t) data.delete(key);
  }, options.sweepIntervalMs ?? 30_000);
  sweep.unref();

  function live(key: string): Entry | undefined {
    if (closed) throw new Error('Key-value store is closed');
    const entry = data.get(key);
    if (entry?.expiresAt != null && entry.expiresAt <= now()) {
      data.delete(key);
      return undefined;
    }
    return entry;
  }

  return {
    kind: 'memory',
    async get(key) {
      return live(key)?.value ?? null;
    },
    async set(key, value, ttlMs) {
      live(key);
      data.set(key, { value, expiresAt: ttlMs === undefined ? null : now() + checkTtl(ttlMs) });
    },
    async setIfAbsent(key, value, ttlMs) {
      const ttl = checkTtl(ttlMs);
      if (live(key)) return false;
      data.set(key, { value, expiresAt: now() + ttl });
      return true;
    },
    async getDel(key) {
      const entry = live(key);
      data.delete(key);
      return entry?.value ?? null;
    },
    async del(key) {
      live(key);
      data.delete(key);
    },
    async incrWindow(key, by, windowMs) {
      const step = checkIncrement(by);
      const window = checkTtl(windowMs, 'windowMs');
      const t = now();
      const entry = live(key);
      if (!entry) {
        data.set(key, { value: String(step), expiresAt: t + window });
        return { total: step, resetMs: window };
      }
      if (!/^-?\d+$/.test(entry.value)) throw new Error('value is not an integer');
      const total = Number(entry.value) + step;
      entry.value = String(total);
      entry.expiresAt ??= t + window;
      return { total, resetMs: entry.expiresAt - t };
    },
    async publish(channel, message) {
      if (closed) throw new Error('Key-value store is closed');
      // Delivered asynchronously, as from Redis: a handler never runs inside publish().
      for (const handler of channels.get(channel) ?? []) queueMicrotask(() => handler(message));
    },
    async subscribe(channel, onMessage) {
      if (closed) throw new Error('Key-value store is closed');
      // Wrapped so that subscribing the same function twice gives two independent subscriptions.
      const handler = (message: string) => onMessage(message);
      let handlers = channels.get(channel);
      if (!handlers) {
        handlers = new Set();
        channels.set(channel, handlers);
      }
      handlers.add(handler);
      return async () => {
        handlers.delete(handler);
        if (handlers.size === 0 && channels.get(channel) === handlers) channels.delete(channel);
      };
    },
    async ping() {
      return !closed;
    },
    async close() {
      closed = true;
      clearInterval(sweep);
      data.clear();
      channels.clear();
    },
  };
}
