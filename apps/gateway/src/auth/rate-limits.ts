import type { KeyValueStore } from '@platform/db';
import { AppError } from '@platform/errors';

/** A fixed-window limit on one counter. */
export type Limit = { name: string; max: number; windowMs: number };

const WINDOW_15_MIN = 15 * 60 * 1000;

/** Sign-in limits; numbers the spec leaves open, chosen to stop abuse but not a person retrying. */
export const SIGN_IN_LIMITS = {
  linkPerAddress: { name: 'magic-link:address', max: 5, windowMs: WINDOW_15_MIN },
  linkPerIp: { name: 'magic-link:ip', max: 30, windowMs: WINDOW_15_MIN },
  failedVerifyPerIp: { name: 'verify-fail:ip', max: 10, windowMs: WINDOW_15_MIN },
} satisfies Record<string, Limit>;

function rateLimited(resetMs: number): AppError {
  return new AppError('rate_limited', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(resetMs / 1000))) },
  });
}

/** Counts one hit; over the limit -> 429 `rate_limited` with Retry-After. */
export async function consumeLimit(kv: KeyValueStore, limit: Limit, subject: string): Promise<void> {
  const { total, resetMs } = await kv.incrWindow(`rl:${limit.name}:${subject}`, 1, limit.windowMs);
  if (total > limit.max) throw rateLimited(resetMs);
}

/** Refuses when the limit is already used up, without counting this request. */
export async function checkLimit(kv: KeyValueStore, limit: Limit, subject: string): Promise<void> {
  const { total, resetMs } = await kv.incrWindow(`rl:${limit.name}:${subject}`, 0, limit.windowMs);
  if (total >= limit.max) throw rateLimited(resetMs);
}

/** Counts a hit without refusing this request (e.g. a failed attempt already answered). */
export async function recordHit(kv: KeyValueStore, limit: Limit, subject: string): Promise<void> {
  await kv.incrWindow(`rl:${limit.name}:${subject}`, 1, limit.windowMs);
}
