import { AppError } from '@platform/errors';
import type Stripe from 'stripe';
import { mergeCartItems, resolveCartMode } from './cart';

const price = (recurring: boolean) =>
  ({ type: recurring ? 'recurring' : 'one_time', recurring: recurring ? {} : null }) as Stripe.Price;

describe('mergeCartItems', () => {
  it('adds quantities of the same price in first-appearance order', () => {
    expect(
      mergeCartItems([
        { price_id: 'b', quantity: 1 },
        { price_id: 'a', quantity: 2 },
        { price_id: 'b', quantity: 3 },
      ]),
    ).toEqual([
      { price_id: 'b', quantity: 4, index: 0 },
      { price_id: 'a', quantity: 2, index: 1 },
    ]);
  });

  it('refuses a merged quantity above 999999', () => {
    expect(() =>
      mergeCartItems([
        { price_id: 'a', quantity: 999_999 },
        { price_id: 'a', quantity: 1 },
      ]),
    ).toThrow(AppError);
  });
});

describe('resolveCartMode', () => {
  it('is payment without recurring prices and subscription with any', () => {
    expect(resolveCartMode([price(false), price(false)])).toBe('payment');
    expect(resolveCartMode([price(false), price(true)])).toBe('subscription');
  });

  it('enforces 20 recurring and 20 one-time lines in subscription mode', () => {
    expect(resolveCartMode([...Array(20).fill(price(true)), ...Array(20).fill(price(false))])).toBe(
      'subscription',
    );
    expect(() => resolveCartMode(Array(21).fill(price(true)))).toThrow(AppError);
    expect(() => resolveCartMode([price(true), ...Array(21).fill(price(false))])).toThrow(AppError);
  });
});
