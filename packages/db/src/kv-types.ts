/**
 * The small key-value port both services use for expiring, atomic, shared state
 * (magic-link codes, rate-limit counters, token budgets, revocation markers).
 * Two adapters: Redis (shared by all instances) and in-process memory (single
 * instance; the embedded default and unit tests).
 */
export type KeyValueStore = {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** Sets a value; with ttlMs it expires. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; true when it was set. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Atomic get-and-delete: of two concurrent calls, at most one sees the value. */
  getDel(key: string): Promise<string | null>;
  del(key: string): Promise<void>;
  /**
   * Adds `by` to a counter in a fixed window that starts at the first increment
   * and lasts windowMs. Returns the new total and the ms left in the window.
   */
  incrWindow(key: string, by: number, windowMs: number): Promise<{ total: number; resetMs: number }>;
  /** Fire-and-forget broadcast to every instance (memory: this process only). */
  publish(channel: string, message: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  /** Health probe. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
};
