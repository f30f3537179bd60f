import type { RateCounter } from './pending';
import { rateRefusal } from './rate-refusal';

// The 429 a spent per-minute rate is answered with.

const counter = (over: Partial<RateCounter> = {}) => ({ max: 30, ...over }) as RateCounter;

describe('rateRefusal', () => {
  it('a shared limit is a plain 429 with Retry-After and no details', () => {
    const err = rateRefusal(counter(), 2500);
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limited');
    expect(err.headers).toEqual({ 'Retry-After': '3' });
    expect(err.details).toBeUndefined();
  });

  it("the key's own rule is named in details, with the same Retry-After", () => {
    const err = rateRefusal(counter({ max: 7, keyRule: { apiKeyId: 'key-1' } }), 2500);
    expect(err.status).toBe(429);
    expect(err.details).toEqual([
      { path: 'key.requests_per_minute', message: 'requests per minute of API key key-1 (7) are spent' },
    ]);
    expect(err.headers).toEqual(rateRefusal(counter(), 2500).headers);
  });
});
