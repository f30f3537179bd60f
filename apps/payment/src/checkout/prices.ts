import { AppError } from '@platform/errors';
import type Stripe from 'stripe';
import { isResourceMissing, mapStripeError } from '../stripe-errors';

/** Parallel price look-ups per request; a 100-item cart must not burst Stripe's rate limit. */
const LOOKUP_CONCURRENCY = 8;

/** The id of a price's product, whether Stripe sent it as an id or expanded. */
export function productIdOf(price: Stripe.Price): string {
  return typeof price.product === 'string' ? price.product : price.product.id;
}

export function isRecurring(price: Stripe.Price): boolean {
  return price.type === 'recurring' || price.recurring !== null;
}

async function retrievePrice(stripe: Stripe, priceId: string, path: string): Promise<Stripe.Price> {
  try {
    return await stripe.prices.retrieve(priceId);
  } catch (err) {
    if (isResourceMissing(err)) {
      throw new AppError('price_not_found', { details: [{ path, message: `no such price: ${priceId}` }] });
    }
    throw mapStripeError(err);
  }
}

/**
 * Reads each price from Stripe (at most LOOKUP_CONCURRENCY at a time). An
 * unknown price is 400 `price not found` with the request path of the first
 * one in `details`.
 */
export async function loadPrices(
  stripe: Stripe,
  lookups: ReadonlyArray<{ priceId: string; path: string }>,
): Promise<Map<string, Stripe.Price>> {
  const prices = new Map<string, Stripe.Price>();
  const queue = [...lookups];
  async function worker(): Promise<void> {
    for (let next = queue.shift(); next; next = queue.shift()) {
      prices.set(next.priceId, await retrievePrice(stripe, next.priceId, next.path));
    }
  }
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, queue.length) }, worker));
  return prices;
}
