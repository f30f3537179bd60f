import { z } from 'zod';

/**
 * Prices of one model in currency units per million tokens. A price per
 * million tokens in units is the same number as micro-units per token, so a
 * cost is a plain sum of products.
 */
export const ZModelPrice = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  /** Prompt tokens served from the provider's cache; unset -> `input`. */
  cached_input: z.number().nonnegative().optional(),
  /** Prompt tokens written to the provider's cache (Anthropic: 1.25 x input); unset -> `input`. */
  cache_write: z.number().nonnegative().optional(),
});
export type ModelPrice = z.infer<typeof ZModelPrice>;

/** `<provider>/<model>` -> price; the lanes config's `prices`. */
export const ZPriceTable = z.record(z.string().min(3).max(300), ZModelPrice);
export type PriceTable = z.infer<typeof ZPriceTable>;

/**
 * List prices (USD per million tokens) of the built-in lanes' models, as the
 * providers published them in 2026-11; see docs/usage-and-budgets.md. The
 * free lane is priced at the paid tier's list price, so a free model's usage
 * still has a value to budget and report.
 */
export const DEFAULT_PRICES: PriceTable = {
  'groq/llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'cerebras/gpt-oss-120b': { input: 0.35, output: 0.75 },
  'google/gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'openrouter/openai/gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'openai/gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
  'openrouter/openai/gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
};

export type TokenCounts = {
  promptTokens: number;
  completionTokens: number;
  /** Part of promptTokens read from the provider's cache. */
  cachedTokens: number;
  /** Part of promptTokens written to the provider's cache. */
  cacheWriteTokens?: number;
};

/** Cost in micro-units, rounded up to a whole micro-unit; 0 for a model without a price. */
export function costMicros(price: ModelPrice | undefined, tokens: TokenCounts): number {
  if (!price) return 0;
  const cached = Math.min(tokens.cachedTokens, tokens.promptTokens);
  const written = Math.min(tokens.cacheWriteTokens ?? 0, tokens.promptTokens - cached);
  const raw =
    (tokens.promptTokens - cached - written) * price.input +
    cached * (price.cached_input ?? price.input) +
    written * (price.cache_write ?? price.input) +
    tokens.completionTokens * price.output;
  // Float noise (0.15 * 3 = 0.44999999999999996) must not round a whole cost up.
  return Math.ceil(Math.round(raw * 1e6) / 1e6);
}

/** The price of `provider`/`model`, or undefined. */
export function priceOf(
  prices: PriceTable,
  provider: string | null,
  model: string | null,
): ModelPrice | undefined {
  if (!provider || !model) return undefined;
  return prices[`${provider}/${model}`];
}
