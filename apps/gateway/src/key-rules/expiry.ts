import { AppError } from '@platform/errors';

/** An ISO expiry as a Date; one not after `now` is 400 `validation failed` naming expires_at. */
export function futureExpiry(iso: string | null | undefined, now: number): Date | undefined {
  if (iso === null || iso === undefined) return undefined;
  const at = new Date(iso);
  if (at.getTime() > now) return at;
  throw new AppError('validation_failed', {
    details: [{ path: 'expires_at', message: 'must be in the future' }],
  });
}
