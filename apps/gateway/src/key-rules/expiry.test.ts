import { AppError } from '@platform/errors';
import { futureExpiry } from './expiry';

// An API key's expires_at as given by the client.

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('futureExpiry', () => {
  it('no expiry is none', () => {
    expect(futureExpiry(null, NOW)).toBeUndefined();
    expect(futureExpiry(undefined, NOW)).toBeUndefined();
  });

  it('a future instant is kept as a Date', () => {
    expect(futureExpiry('2026-01-01T00:00:01Z', NOW)?.toISOString()).toBe('2026-01-01T00:00:01.000Z');
  });

  it('now itself is not in the future', () => {
    expect(() => futureExpiry('2026-01-01T00:00:00Z', NOW)).toThrow(AppError);
  });

  it('a past instant is 400 validation failed naming expires_at', () => {
    try {
      futureExpiry('2025-12-31T23:59:59Z', NOW);
      throw new Error('no error');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).details).toEqual([{ path: 'expires_at', message: 'must be in the future' }]);
    }
  });

  it('a string that is no date is refused, not stored as Invalid Date', () => {
    expect(() => futureExpiry('tomorrow', NOW)).toThrow(AppError);
  });
});
