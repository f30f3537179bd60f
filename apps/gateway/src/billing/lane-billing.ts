import { ZMeterName } from '@platform/contract';
import { z } from 'zod';

/** What a ledger record is billed by: its tokens or its cost in millionths of the currency. */
export const BILLING_QUANTITIES = ['total_tokens', 'cost_micros'] as const;
export type BillingQuantity = (typeof BILLING_QUANTITIES)[number];

/**
 * `billing` of a lane (or `media_billing`) in the lanes config, see
 * docs/gateway-ai.md "Paid lanes": `metered` (the default) ships the lane's
 * usage to Stripe and checks nothing; `paid` ships it and requires an active
 * subscription to `product` before a provider is called; `free` ships nothing.
 */
export const ZLaneBilling = z
  .strictObject({
    mode: z.enum(['metered', 'paid', 'free']).default('metered'),
    /** payment's meter name; unset -> BILLING_METER, then payment's default meter. */
    meter: ZMeterName.optional(),
    /** unset -> BILLING_QUANTITY. */
    quantity: z.enum(BILLING_QUANTITIES).optional(),
    /** The Stripe product (`prod_...`) a `paid` lane requires an active subscription to. */
    product: z.string().min(1).max(255).optional(),
    /** Or the Stripe entitlement feature (lookup key) a `paid` lane requires (payment's entitlements). */
    entitlement: z.string().min(1).max(255).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.mode === 'paid' && (b.product === undefined) === (b.entitlement === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['product'],
        message: 'a paid lane names its product or its entitlement (one of them)',
      });
  });
export type LaneBilling = z.infer<typeof ZLaneBilling>;
