import { ZLanesConfig } from '../ai/config/lanes';
import { compilePrices, costMicros, DEFAULT_PRICES, mediaCostMicros, priceOf } from './pricing';

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
    expect(priceOf(compilePrices(DEFAULT_PRICES), 'openai', 'gpt-4o-mini', Date.now())).toEqual({
      input: 0.15,
      output: 0.6,
      cached_input: 0.075,
    });
    expect(priceOf(compilePrices(DEFAULT_PRICES), null, null, 0)).toBeUndefined();
  });
});

describe('media prices', () => {
  const prices = compilePrices(DEFAULT_PRICES);
  const at = Date.now();

  it('an image costs its size at standard quality, times n; a size not listed the dearest price', () => {
    const dalle = priceOf(prices, 'openai', 'dall-e-3', at);
    expect(mediaCostMicros(dalle, { kind: 'image', count: 1, size: '1024x1024' })).toBe(40_000);
    expect(mediaCostMicros(dalle, { kind: 'image', count: 3, size: '1792x1024' })).toBe(240_000);
    expect(mediaCostMicros(dalle, { kind: 'image', count: 1, size: '256x256' })).toBe(120_000);
    // No standard quality listed: the dearest quality of the size.
    expect(
      mediaCostMicros(priceOf(prices, 'openai', 'gpt-image-1', at), {
        kind: 'image',
        count: 1,
        size: '1024x1024',
      }),
    ).toBe(167_000);
  });

  it('speech per character (or per token when priced so), music and sound effects per second', () => {
    const tts = priceOf(prices, 'openai', 'tts-1', at);
    expect(mediaCostMicros(tts, { kind: 'tts', characters: 1000, tokens: 200 })).toBe(15_000);
    expect(mediaCostMicros({ input: 2, output: 0 }, { kind: 'tts', characters: 1000, tokens: 200 })).toBe(
      400,
    );
    expect(
      mediaCostMicros(priceOf(prices, 'elevenlabs', 'music_v1', at), { kind: 'music', seconds: 30 }),
    ).toBe(150_000);
    const sfx = priceOf(prices, 'elevenlabs', 'eleven_text_to_sound_v2', at);
    expect(mediaCostMicros(sfx, { kind: 'soundfx', seconds: 10 })).toBe(60_000);
    // Length left to the provider: the price per generation.
    expect(mediaCostMicros(sfx, { kind: 'soundfx', seconds: undefined })).toBe(30_000);
    expect(mediaCostMicros({ per_second: 0.01 }, { kind: 'soundfx', seconds: undefined })).toBe(220_000);
    expect(mediaCostMicros(undefined, { kind: 'image', count: 1, size: '1024x1024' })).toBe(0);
  });

  it('every default media price is above 0', () => {
    for (const [model, size] of [
      ['openai/dall-e-3', '1024x1024'],
      ['openai/dall-e-2', '512x512'],
    ] as const) {
      const [provider, name] = model.split('/') as [string, string];
      expect(
        mediaCostMicros(priceOf(prices, provider, name, at), { kind: 'image', count: 1, size }),
      ).toBeGreaterThan(0);
    }
  });
});

describe('effective dates', () => {
  const prices = compilePrices({
    'p/m': [
      { input: 3, output: 3, effective_from: '2027-01-01' },
      { input: 1, output: 1 },
      { input: 2, output: 2, effective_from: '2026-12-01T12:00:00Z' },
    ],
  });
  const tokens = { promptTokens: 1, completionTokens: 0, cachedTokens: 0 };
  const cost = (iso: string) => costMicros(priceOf(prices, 'p', 'm', Date.parse(iso)), tokens);

  it('the price in force at the instant applies: before the first date the undated one, then each from its date', () => {
    expect(cost('2026-11-30T00:00:00Z')).toBe(1);
    expect(cost('2026-12-01T11:59:59Z')).toBe(1);
    expect(cost('2026-12-01T12:00:00Z')).toBe(2);
    expect(cost('2027-01-01T00:00:00Z')).toBe(3);
  });

  it('a model whose only price starts later has none before', () => {
    const later = compilePrices({ 'p/m': { input: 1, output: 1, effective_from: '2030-01-01' } });
    expect(priceOf(later, 'p', 'm', Date.parse('2029-12-31T23:59:59Z'))).toBeUndefined();
    expect(priceOf(later, 'p', 'm', Date.parse('2030-01-01T00:00:00Z'))).toBeDefined();
  });

  it('the config refuses two prices of one model with the same date', () => {
    const result = ZLanesConfig.safeParse({
      lanes: { free: { default_model: 'm', targets: [{ provider: 'openai', model: 'm' }] } },
      media: { image: [], tts: [], music: [], soundfx: [] },
      prices: {
        'openai/m': [
          { input: 1, output: 1, effective_from: '2027-01-01' },
          { input: 2, output: 2, effective_from: '2027-01-01' },
        ],
      },
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message)).toContain('two prices with one effective_from');
  });
});
