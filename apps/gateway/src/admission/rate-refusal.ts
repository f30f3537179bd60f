import { AppError } from '@platform/errors';
import { rateLimited } from '@platform/service-kit';
import type { RateCounter } from './pending';

/** 429 rate_limited with Retry-After; when the key's own rule refused, `details` names it. */
export function rateRefusal(counter: RateCounter, resetMs: number): AppError {
  const plain = rateLimited(resetMs);
  if (!counter.keyRule) return plain;
  return new AppError('rate_limited', {
    headers: plain.headers ?? {},
    details: [
      {
        path: 'key.requests_per_minute',
        message: `requests per minute of API key ${counter.keyRule.apiKeyId} (${counter.max}) are spent`,
      },
    ],
  });
}
