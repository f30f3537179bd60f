import { callStripe } from '../stripe-errors';
import type { SyncDeps } from '../subscriptions/sync';
import { replaceEntitlements } from './repo';

/** Most active entitlements read for one customer. */
const MAX_ENTITLEMENTS = 1000;

/**
 * Reads the customer's active entitlements from Stripe (what the products
 * they pay for grant, as configured in Stripe's product catalogue) and stores
 * them for the user. Events only say that the summary changed; the list is
 * always re-read, so late or reordered events cannot store an old one.
 */
export async function syncEntitlements(
  deps: SyncDeps,
  customer: { userId: string; stripeCustomerId: string },
): Promise<void> {
  const syncedAt = deps.now();
  const list = await callStripe(() =>
    deps.stripe.entitlements.activeEntitlements
      .list({ customer: customer.stripeCustomerId, limit: 100 })
      .autoPagingToArray({ limit: MAX_ENTITLEMENTS }),
  );
  await replaceEntitlements(deps.prisma, {
    ...customer,
    syncedAt,
    entitlements: list.map((e) => ({
      lookupKey: e.lookup_key,
      featureId: typeof e.feature === 'string' ? e.feature : e.feature.id,
    })),
  });
}
