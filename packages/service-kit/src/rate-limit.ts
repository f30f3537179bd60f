import { AppError } from '@platform/errors';

/**
 * The key-value port's fixed-window counter (`KeyValueStore.incrWindow` of
 * @platform/db): adds `by` to the counter of the current window and returns
 * the new total and the time left in the window.
 */
export type WindowCounter = {
  incrWindow(key: string, by: number, windowMs: number): Promise<{ total: number; resetMs: number }>;
};

/** A fixed-window limit on one counter, e.g. requests per API key and minute. */
export type Limit = { name: string; max: number; windowMs: number };

/** 429 `rate_limited` whose Retry-After (whole seconds, at least 1) ends the wait. */
export function rateLimited(retryAfterMs: number): AppError {
  return new AppError('rate_limited', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  });
}

/** The counter of `limit` for `subject` (a key id, a client address). */
export function windowKey(limit: Limit, subject: string): string {
  return `rl:${limit.name}:${subject}`;
}

/** Counts one hit of `subject` and returns the window's state. */
export function countHit(
  kv: WindowCounter,
  limit: Limit,
  subject: string,
): Promise<{ total: number; resetMs: number }> {
  return kv.incrWindow(windowKey(limit, subject), 1, limit.windowMs);
}

/** Counts one hit; over the limit -> 429 `rate_limited` with Retry-After. */
export async function consumeLimit(kv: WindowCounter, limit: Limit, subject: string): Promise<void> {
  const { total, resetMs } = await countHit(kv, limit, subject);
  if (total > limit.max) throw rateLimited(resetMs);
}

/** Refuses when the limit is already used up, without counting this request. */
export async function checkLimit(kv: WindowCounter, limit: Limit, subject: string): Promise<void> {
  const { total, resetMs } = await kv.incrWindow(windowKey(limit, subject), 0, limit.windowMs);
  if (total >= limit.max) throw rateLimited(resetMs);
}
