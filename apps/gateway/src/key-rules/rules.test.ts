import { AppError } from '@platform/errors';
import { allowedTargets, assertKeyLive, assertLaneAllowed, modelAllowed, storedRulesOf } from './rules';

// A key's rules as stored and as enforced, without a database.

describe('key rules', () => {
  it('stored rules that parse are kept; none are none; a row edited out of shape allows nothing', () => {
    expect(storedRulesOf({ lanes: ['free'], requests_per_minute: 5 })).toEqual({
      lanes: ['free'],
      requests_per_minute: 5,
    });
    expect(storedRulesOf(null)).toBeUndefined();
    expect(storedRulesOf(undefined)).toBeUndefined();
    expect(storedRulesOf({ lanes: 'free' })).toEqual({ lanes: [] });
  });

  it('a model is on the list by its bare id or as provider/model', () => {
    const target = { provider: 'groq', model: 'llama' };
    expect(modelAllowed(['llama'], target)).toBe(true);
    expect(modelAllowed(['groq/llama'], target)).toBe(true);
    expect(modelAllowed(['openai/llama'], target)).toBe(false);
  });

  it('a key past its expiry is 401 api_key_expired, naming when; one before it or without one passes', () => {
    const expiresAt = Date.parse('2027-01-01T00:00:00Z');
    expect(() => assertKeyLive({ expiresAt }, expiresAt - 1)).not.toThrow();
    expect(() => assertKeyLive({}, Number.MAX_SAFE_INTEGER)).not.toThrow();
    try {
      assertKeyLive({ expiresAt }, expiresAt);
      throw new Error('not refused');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('api_key_expired');
      expect((err as AppError).details?.[0]?.message).toBe('the key expired at 2027-01-01T00:00:00.000Z');
    }
  });

  it('a lane list refuses other lanes, naming the list; no list allows every lane', () => {
    expect(() => assertLaneAllowed(undefined, 'paid')).not.toThrow();
    expect(() => assertLaneAllowed({ lanes: ['free'] }, 'free')).not.toThrow();
    try {
      assertLaneAllowed({ lanes: ['free', 'fast'] }, 'paid');
      throw new Error('not refused');
    } catch (err) {
      expect((err as AppError).code).toBe('key_lane_not_allowed');
      expect((err as AppError).details?.[0]?.message).toBe(
        "lane paid is not in the key's lanes (free, fast)",
      );
    }
  });

  it('allowedTargets keeps the listed targets in order, and refuses naming them all when none is', () => {
    const a = { provider: 'groq', model: 'a' };
    const b = { provider: 'openai', model: 'b' };
    expect(allowedTargets({ models: ['b', 'a'] }, [a, b])).toEqual([a, b]);
    expect(allowedTargets(undefined, [a])).toEqual([a]);
    try {
      allowedTargets({ models: ['c'] }, [a, b]);
      throw new Error('not refused');
    } catch (err) {
      expect((err as AppError).code).toBe('key_model_not_allowed');
      expect((err as AppError).details?.[0]?.message).toBe(
        "none of groq/a, openai/b is in the key's models (c)",
      );
    }
  });
});
