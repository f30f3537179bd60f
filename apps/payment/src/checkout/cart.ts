import { type CartItem, MAX_CART_ITEMS, MAX_QUANTITY } from '@platform/contract';
import { AppError } from '@platform/errors';
import type Stripe from 'stripe';
import { isRecurring } from './prices';

/** Stripe Checkout in subscription mode takes at most 20 recurring and 20 one-time line items. */
export const MAX_SUBSCRIPTION_RECURRING_ITEMS = 20;
export const MAX_SUBSCRIPTION_ONE_TIME_ITEMS = 20;

/** A cart line after merging, with the index of its first occurrence for error paths. */
export type MergedCartItem = CartItem & { index: number };

/**
 * Merges lines that name the same price by adding their quantities, in the
 * order of first appearance: a client that sends `[{a,1},{a,2}]` means three of
 * a, and Stripe would refuse the duplicate line. A merged quantity above
 * Stripe's per-line maximum is 400 `validation failed`.
 */
export function mergeCartItems(items: readonly CartItem[]): MergedCartItem[] {
  const merged = new Map<string, MergedCartItem>();
  items.forEach((item, index) => {
    const line = merged.get(item.price_id);
    if (line) line.quantity += item.quantity;
    else merged.set(item.price_id, { ...item, index });
  });
  const lines = [...merged.values()];
  const tooMany = lines.find((line) => line.quantity > MAX_QUANTITY);
  if (tooMany) {
    throw new AppError('validation_failed', {
      details: [
        {
          path: `items.${tooMany.index}.quantity`,
          message: `quantities of price ${tooMany.price_id} add up to more than ${MAX_QUANTITY}`,
        },
      ],
    });
  }
  return lines;
}

/**
 * Any recurring price makes the cart a subscription checkout (one-time prices
 * are then billed on the first invoice); otherwise it is a payment. Stripe's
 * line-item limits of the chosen mode are checked here so the client gets a
 * precise 400 instead of Stripe's message.
 */
export function resolveCartMode(prices: readonly Stripe.Price[]): 'payment' | 'subscription' {
  const recurring = prices.filter(isRecurring).length;
  const oneTime = prices.length - recurring;
  if (recurring === 0) {
    if (oneTime > MAX_CART_ITEMS) throw itemLimit(`a payment checkout takes at most ${MAX_CART_ITEMS} items`);
    return 'payment';
  }
  if (recurring > MAX_SUBSCRIPTION_RECURRING_ITEMS || oneTime > MAX_SUBSCRIPTION_ONE_TIME_ITEMS) {
    throw itemLimit(
      `a subscription checkout takes at most ${MAX_SUBSCRIPTION_RECURRING_ITEMS} recurring and ${MAX_SUBSCRIPTION_ONE_TIME_ITEMS} one-time prices`,
    );
  }
  return 'subscription';
}

function itemLimit(message: string): AppError {
  return new AppError('validation_failed', { details: [{ path: 'items', message }] });
}
