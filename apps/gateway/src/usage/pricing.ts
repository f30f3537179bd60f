import { z } from 'zod';

/**
 * When a price starts to apply: a UTC date (`2027-01-01`, its midnight) or
 * an ISO date-time with offset. Unset: since always.
 */
const ZEffectiveFrom = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/**
 * Prices of one model in currency units per million tokens. A price per
 * million tokens in units is the same number as micro-units per token, so a
 * cost is a plain sum of products.
 */
export const ZTokenPrice = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  /** Prompt tokens served from the provider's cache; unset -> `input`. */
  cached_input: z.number().nonnegative().optional(),
  /** Prompt tokens written to the provider's cache (Anthropic: 1.25 x input); unset -> `input`. */
  cache_write: z.number().nonnegative().optional(),
  effective_from: ZEffectiveFrom.optional(),
});
export type TokenPrice = z.infer<typeof ZTokenPrice>;

/**
 * Prices of a media model, in currency units: per image (by quality, then
 * size), per million characters of speech, per second of audio, or per
 * request (a sound effect whose length the provider chooses).
 */
export const ZMediaPrice = z
  .strictObject({
    per_image: z
      .record(z.string().min(1).max(32), z.record(z.string().min(1).max(32), z.number().nonnegative()))
      .optional(),
    per_million_characters: z.number().nonnegative().optional(),
    per_second: z.number().nonnegative().optional(),
    per_request: z.number().nonnegative().optional(),
    effective_from: ZEffectiveFrom.optional(),
  })
  .refine(
    (p) =>
      p.per_image !== undefined ||
      p.per_million_characters !== undefined ||
      p.per_second !== undefined ||
      p.per_request !== undefined,
    { message: 'a media price needs per_image, per_million_characters, per_second or per_request' },
  );
export type MediaPrice = z.infer<typeof ZMediaPrice>;

export type ModelPrice = TokenPrice | MediaPrice;
const ZModelPrice = z.union([ZTokenPrice, ZMediaPrice]);

/**
 * `<provider>/<model>` -> its price, or the list of its prices over time
 * (each with its `effective_from`); the lanes config's `prices`.
 */
export const ZPriceTableInput = z.record(
  z.string().min(3).max(300),
  z.union([ZModelPrice, z.array(ZModelPrice).min(1).max(64)]),
);
export type PriceTableInput = z.infer<typeof ZPriceTableInput>;

/** One price and the instant (ms since the epoch) from which it applies. */
export type DatedPrice = { from: number; price: ModelPrice };

/** `<provider>/<model>` -> its prices, oldest first: what the running gateway looks up. */
export type PriceTable = Readonly<Record<string, readonly DatedPrice[]>>;

/** A price table's input form, the effective dates parsed and each model's prices sorted by date. */
export function compilePrices(input: PriceTableInput): PriceTable {
  const table: Record<string, DatedPrice[]> = {};
  for (const [key, spec] of Object.entries(input)) {
    const list = Array.isArray(spec) ? spec : [spec];
    table[key] = list
      .map((price) => ({
        from: price.effective_from === undefined ? -Infinity : Date.parse(price.effective_from),
        price,
      }))
      .sort((a, b) => a.from - b.from);
  }
  return table;
}

/** Adds a problem for two prices of one model with the same effective date (which one applies?). */
export function checkPriceDates(input: PriceTableInput, ctx: z.RefinementCtx): void {
  for (const [key, spec] of Object.entries(input)) {
    if (!Array.isArray(spec)) continue;
    const seen = new Set<string>();
    spec.forEach((p, i) => {
      const at = p.effective_from === undefined ? '' : String(Date.parse(p.effective_from));
      if (seen.has(at))
        ctx.addIssue({
          code: 'custom',
          path: ['prices', key, i],
          message: 'two prices with one effective_from',
        });
      seen.add(at);
    });
  }
}

/** Currency units -> micro-units, rounded up, without float noise rounding a whole one up. */
function microsOf(units: number): number {
  return Math.ceil(Math.round(units * 1e12) / 1e6);
}

/**
 * List prices (USD) of the built-in lanes' and media models and of the
 * Anthropic and embedding models a config is likely to name, as the
 * providers published them in 2026-11; see docs/usage-and-budgets.md. The
 * free lane is priced at the paid tier's list price, so a free model's usage
 * still has a value to budget and report.
 */
export const DEFAULT_PRICES: PriceTableInput = {
  'groq/llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'cerebras/gpt-oss-120b': { input: 0.35, output: 0.75 },
  'google/gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'openrouter/openai/gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'openai/gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
  'openrouter/openai/gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
  'anthropic/claude-opus-4-5': { input: 5, output: 25, cached_input: 0.5, cache_write: 6.25 },
  'anthropic/claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
  'anthropic/claude-haiku-4-5': { input: 1, output: 5, cached_input: 0.1, cache_write: 1.25 },
  'openai/text-embedding-3-small': { input: 0.02, output: 0 },
  'openai/text-embedding-3-large': { input: 0.13, output: 0 },
  'openrouter/openai/text-embedding-3-small': { input: 0.02, output: 0 },
  'openrouter/openai/text-embedding-3-large': { input: 0.13, output: 0 },
  'google/gemini-embedding-001': { input: 0.15, output: 0 },
  'openai/dall-e-3': {
    per_image: {
      standard: { '1024x1024': 0.04, '1024x1792': 0.08, '1792x1024': 0.08 },
      hd: { '1024x1024': 0.08, '1024x1792': 0.12, '1792x1024': 0.12 },
    },
  },
  'openai/dall-e-2': { per_image: { standard: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } } },
  // The gateway asks for no quality, so the model's `auto` may pick high: priced at high.
  'openai/gpt-image-1': { per_image: { high: { '1024x1024': 0.167, '1024x1536': 0.25, '1536x1024': 0.25 } } },
  'openai/tts-1': { per_million_characters: 15 },
  'openai/tts-1-hd': { per_million_characters: 30 },
  // Billed by audio tokens (about $0.015 a minute of speech): per character at tts-1's rate.
  'openai/gpt-4o-mini-tts': { per_million_characters: 15 },
  'elevenlabs/music_v1': { per_second: 0.005 },
  // 20 credits a second, or 100 a generation when the provider picks the length.
  'elevenlabs/eleven_text_to_sound_v2': { per_second: 0.006, per_request: 0.03 },
};

export type TokenCounts = {
  promptTokens: number;
  completionTokens: number;
  /** Part of promptTokens read from the provider's cache. */
  cachedTokens: number;
  /** Part of promptTokens written to the provider's cache. */
  cacheWriteTokens?: number;
};

/** The price of a token-priced model; undefined for a media price or none. */
export function tokenPriceOf(price: ModelPrice | undefined): TokenPrice | undefined {
  return price && 'input' in price ? price : undefined;
}

/** Cost in micro-units, rounded up to a whole micro-unit; 0 for a model without a token price. */
export function costMicros(price: ModelPrice | undefined, tokens: TokenCounts): number {
  const p = tokenPriceOf(price);
  if (!p) return 0;
  const cached = Math.min(tokens.cachedTokens, tokens.promptTokens);
  const written = Math.min(tokens.cacheWriteTokens ?? 0, tokens.promptTokens - cached);
  const raw =
    (tokens.promptTokens - cached - written) * p.input +
    cached * (p.cached_input ?? p.input) +
    written * (p.cache_write ?? p.input) +
    tokens.completionTokens * p.output;
  // Float noise (0.15 * 3 = 0.44999999999999996) must not round a whole cost up.
  return Math.ceil(Math.round(raw * 1e6) / 1e6);
}

/** What one media request asks for, in the units its price is given in. */
export type MediaUse =
  | { kind: 'image'; count: number; size: string }
  | { kind: 'tts'; characters: number; tokens: number }
  | { kind: 'music' | 'soundfx'; seconds: number | undefined };

/** The longest sound effect the contract allows: what one of unknown length is priced at without per_request. */
export const SOUNDFX_MAX_SECONDS = 22;

/**
 * The price of one image of `size`: at quality `standard` (what the gateway
 * asks for), else at the dearest quality priced for that size; a size not in
 * the table at the dearest price of all, so no image is ever free by omission.
 */
function imagePrice(perImage: NonNullable<MediaPrice['per_image']>, size: string): number {
  const standard = perImage.standard?.[size];
  if (standard !== undefined) return standard;
  let forSize: number | undefined;
  let any = 0;
  for (const sizes of Object.values(perImage)) {
    const p = sizes[size];
    if (p !== undefined) forSize = Math.max(forSize ?? 0, p);
    for (const q of Object.values(sizes)) any = Math.max(any, q);
  }
  return forSize ?? any;
}

/**
 * Cost of a media request in micro-units, rounded up. Speech priced by tokens
 * (a token price) counts the text's tokens at `input`. `per_request` applies
 * where the request has no quantity the price has a rate for: a sound effect
 * of unknown length (without it: the longest one), or a price with nothing
 * else (per image for images). 0 without a price.
 */
export function mediaCostMicros(price: ModelPrice | undefined, use: MediaUse): number {
  if (!price) return 0;
  if ('input' in price) {
    if (use.kind !== 'tts') return 0;
    return costMicros(price, { promptTokens: use.tokens, completionTokens: 0, cachedTokens: 0 });
  }
  const request = price.per_request ?? 0;
  switch (use.kind) {
    case 'image':
      return microsOf(use.count * (price.per_image ? imagePrice(price.per_image, use.size) : request));
    case 'tts':
      return price.per_million_characters !== undefined
        ? Math.ceil(use.characters * price.per_million_characters)
        : microsOf(request);
    default: {
      if (price.per_second === undefined) return microsOf(request);
      if (use.seconds === undefined && price.per_request !== undefined) return microsOf(request);
      return microsOf((use.seconds ?? SOUNDFX_MAX_SECONDS) * price.per_second);
    }
  }
}

/** The price of `provider`/`model` in force at `at` (ms since the epoch), or undefined. */
export function priceOf(
  prices: PriceTable,
  provider: string | null,
  model: string | null,
  at: number,
): ModelPrice | undefined {
  if (!provider || !model) return undefined;
  const dated = prices[`${provider}/${model}`];
  if (!dated) return undefined;
  for (let i = dated.length - 1; i >= 0; i -= 1) {
    const entry = dated[i] as DatedPrice;
    if (entry.from <= at) return entry.price;
  }
  return undefined;
}
