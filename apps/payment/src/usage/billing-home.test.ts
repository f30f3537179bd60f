import { type BillingItem, placeEvent } from './billing-home';

const HOUR = 3_600_000;
const start = new Date('2026-11-01T00:00:00.000Z');
const item = (over: Partial<BillingItem> = {}): BillingItem => ({
  subscriptionId: 'sub_1',
  itemId: 'si_1',
  priceId: 'price_1',
  status: 'active',
  stripeCustomerId: 'cus_1',
  currency: 'usd',
  periodStart: start,
  periodEnd: new Date('2026-12-01T00:00:00.000Z'),
  subscriptionCreatedAt: new Date('2026-10-01T00:00:00.000Z'),
  ...over,
});
const rules = { graceMs: 50 * 60_000, currency: undefined };
const at = (ms: number) => new Date(start.getTime() + ms);

describe('placeEvent', () => {
  it('sends usage inside the open period', () => {
    expect(placeEvent([item()], at(HOUR), at(2 * HOUR), rules, 'tokens').kind).toBe('send');
  });

  it('holds usage without an item in a billing status', () => {
    expect(placeEvent([], at(0), at(HOUR), rules, 'tokens')).toEqual({
      kind: 'unbillable',
      reason: 'no active subscription item with a price on meter tokens',
    });
    expect(placeEvent([item({ status: 'canceled' })], at(0), at(HOUR), rules, 'tokens').kind).toBe(
      'unbillable',
    );
  });

  it('sends usage of the previous period until the grace ends, then calls it late', () => {
    expect(placeEvent([item()], at(-HOUR), at(40 * 60_000), rules, 'tokens').kind).toBe('send');
    expect(placeEvent([item()], at(-HOUR), at(51 * 60_000), rules, 'tokens').kind).toBe('late');
  });

  it('calls usage of a stored period that ended more than the grace ago late', () => {
    const end = new Date('2026-12-01T00:00:00.000Z').getTime();
    const placed = placeEvent([item()], new Date(end - HOUR), new Date(end + 2 * HOUR), rules, 'tokens');
    expect(placed.kind).toBe('late');
    expect(
      placeEvent([item()], new Date(end - HOUR), new Date(end + 20 * 60_000), rules, 'tokens').kind,
    ).toBe('send');
  });

  it('holds usage from before the subscription started', () => {
    const placed = placeEvent([item()], new Date('2026-09-30T00:00:00.000Z'), at(HOUR), rules, 'tokens');
    expect(placed.kind).toBe('unbillable');
  });

  it('holds usage whose only price is in another currency', () => {
    const placed = placeEvent(
      [item({ currency: 'eur' })],
      at(HOUR),
      at(HOUR),
      { ...rules, currency: 'usd' },
      'cost',
    );
    expect(placed).toEqual({
      kind: 'unbillable',
      reason: 'currency_mismatch: the price on meter cost is in eur, not usd',
    });
  });
});
