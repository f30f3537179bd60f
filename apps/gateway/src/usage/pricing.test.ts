import { costMicros, DEFAULT_PRICES, priceOf } from './pricing';

describe('cost', () => {
  it('prices per million tokens are micro-units per token; cached prompt tokens at their own price', () => {
    const price = { input: 0.15, output: 0.6, cached_input: 0.075 };
    expect(costMicros(price, { promptTokens: 1000, completionTokens: 500, cachedTokens: 0 })).toBe(450);
    expect(costMicros(price, { promptTokens: 1000, completionTokens: 0, cachedTokens: 1000 })).toBe(75);
    // Rounded up to a whole micro-unit, without float noise rounding a whole one up.
    expect(costMicros(price, { promptTokens: 3, completionTokens: 0, cachedTokens: 0 })).toBe(1);
    expect(
      costMicros({ input: 1, output: 1 }, { promptTokens: 3, completionTokens: 0, cachedTokens: 0 }),
    ).toBe(3);
  });

  it('cache writes at cache_write, else at input; never more cached and written tokens than prompt tokens', () => {
    const price = { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 };
    const tokens = { promptTokens: 1100, completionTokens: 0, cachedTokens: 100, cacheWriteTokens: 1000 };
    expect(costMicros(price, tokens)).toBe(3780);
    expect(costMicros({ input: 3, output: 15 }, tokens)).toBe(3300);
    expect(
      costMicros(price, { promptTokens: 10, completionTokens: 0, cachedTokens: 4, cacheWriteTokens: 50 }),
    ).toBe(24);
  });

  it('a model without a price costs 0; the built-in lanes all have one', () => {
    expect(costMicros(undefined, { promptTokens: 10, completionTokens: 10, cachedTokens: 0 })).toBe(0);
    expect(priceOf(DEFAULT_PRICES, 'openai', 'gpt-4o-mini')).toEqual({
      input: 0.15,
      output: 0.6,
      cached_input: 0.075,
    });
    expect(priceOf(DEFAULT_PRICES, null, null)).toBeUndefined();
  });
});
