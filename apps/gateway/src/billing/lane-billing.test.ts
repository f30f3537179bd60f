import { ZLaneBilling } from './lane-billing';

// A lane's billing block in the lanes config.

describe('lane billing', () => {
  it('metered is the default and needs nothing else', () => {
    expect(ZLaneBilling.parse({})).toEqual({ mode: 'metered' });
    expect(ZLaneBilling.parse({ mode: 'free' })).toEqual({ mode: 'free' });
  });

  it('a paid lane names its product or its entitlement, exactly one', () => {
    expect(ZLaneBilling.parse({ mode: 'paid', product: 'prod_1' })).toEqual({
      mode: 'paid',
      product: 'prod_1',
    });
    expect(ZLaneBilling.parse({ mode: 'paid', entitlement: 'pro' }).entitlement).toBe('pro');
    const none = ZLaneBilling.safeParse({ mode: 'paid' });
    const both = ZLaneBilling.safeParse({ mode: 'paid', product: 'prod_1', entitlement: 'pro' });
    for (const result of [none, both]) {
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toBe(
        'a paid lane names its product or its entitlement (one of them)',
      );
    }
  });

  it('the quantity is tokens or cost; unknown keys and modes are refused', () => {
    expect(ZLaneBilling.parse({ quantity: 'cost_micros' }).quantity).toBe('cost_micros');
    expect(ZLaneBilling.safeParse({ quantity: 'requests' }).success).toBe(false);
    expect(ZLaneBilling.safeParse({ mode: 'prepaid' }).success).toBe(false);
    expect(ZLaneBilling.safeParse({ price: 1 }).success).toBe(false);
  });
});
