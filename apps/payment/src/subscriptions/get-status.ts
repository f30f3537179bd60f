import { SUBSCRIPTION_NONE, type SubscriptionStatusResponse } from '@platform/contract';
import type { CustomerRecord } from '../customers/repo';
import { findCustomerWithSubscriptionsForProduct, findSubscriptionsForProduct } from './repo';
import { chooseSubscription, toStatusResponse } from './status';
import { type SyncDeps, syncCustomerSubscriptions } from './sync';

export type StatusDeps = SyncDeps & { maxAgeMs: number };

/** Looks up subscription status; one instance per app so concurrent fallback reads are shared. */
export type SubscriptionStatusReader = {
  getStatus(input: { userId: string; productId: string }): Promise<SubscriptionStatusResponse>;
};

/**
 * Answers from the database, which webhooks keep current. When it has nothing
 * fresh for the user and product (no webhook arrived, or the chosen snapshot is
 * older than PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS), every subscription of the
 * customer is read from Stripe once, stored, and the answer is taken from the
 * refreshed rows. Concurrent requests for one customer share one Stripe read.
 */
export function createSubscriptionStatusReader(deps: StatusDeps): SubscriptionStatusReader {
  const inflight = new Map<string, Promise<void>>();

  function refresh(customer: CustomerRecord): Promise<void> {
    let pending = inflight.get(customer.userId);
    if (!pending) {
      pending = syncCustomerSubscriptions(deps, customer).finally(() => inflight.delete(customer.userId));
      inflight.set(customer.userId, pending);
    }
    return pending;
  }

  function isFresh(at: Date | null): boolean {
    return at !== null && deps.now().getTime() - at.getTime() <= deps.maxAgeMs;
  }

  return {
    async getStatus({ userId, productId }) {
      // One round trip: the customer with their subscriptions of the product.
      const found = await findCustomerWithSubscriptionsForProduct(deps.prisma, userId, productId);
      if (!found) return SUBSCRIPTION_NONE;
      const { customer } = found;
      let chosen = chooseSubscription(found.subscriptions);
      const fresh = chosen ? isFresh(chosen.syncedAt) : isFresh(customer.subscriptionsSyncedAt);
      if (!fresh) {
        await refresh(customer);
        chosen = chooseSubscription(await findSubscriptionsForProduct(deps.prisma, userId, productId));
      }
      return chosen ? toStatusResponse(chosen, productId) : SUBSCRIPTION_NONE;
    },
  };
}
