import { SUBSCRIPTION_NONE, type SubscriptionStatusResponse } from '@platform/contract';
import DataLoader from 'dataloader';
import { type CustomerRecord, clearCheckoutPending } from '../customers/repo';
import {
  type CustomerWithSubscriptions,
  ENTITLING_STATUSES,
  findCustomersWithSubscriptionsForProducts,
  findSubscriptionsForProduct,
  type StatusKey,
} from './repo';
import { chooseSubscription, toStatusResponse } from './status';

const isEntitling = (status: string) => (ENTITLING_STATUSES as readonly string[]).includes(status);

import { type SyncDeps, syncCustomerSubscriptions } from './sync';

export type StatusDeps = SyncDeps & { maxAgeMs: number };

/** Stripe Checkout sessions expire after at most 24 hours; a pending mark older than that is moot. */
export const CHECKOUT_PENDING_MS = 24 * 60 * 60 * 1000;

/** The most reads one statement carries; more waiting reads go out as further batches at once. */
export const MAX_READS_PER_STATEMENT = 100;

/** Looks up subscription status; one instance per app so concurrent fallback reads are shared. */
export type SubscriptionStatusReader = {
  getStatus(input: { userId: string; productId: string }): Promise<SubscriptionStatusResponse>;
};

/**
 * Answers from the database, which webhooks keep current. When it has nothing
 * fresh for the user and product (no webhook arrived, or the chosen snapshot is
 * older than PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS), or a subscription checkout
 * of the user is pending and the stored answer does not entitle (the user may
 * have paid a moment ago, before the webhook), every subscription of the
 * customer is read from Stripe once, stored, and the answer is taken from the
 * refreshed rows. Concurrent requests for one customer share one Stripe read.
 *
 * Reads that arrive together share one statement: every read asked for while
 * the event loop handles one round of I/O goes out as one query at the end of
 * that round (`setImmediate`), up to MAX_READS_PER_STATEMENT per query. A read
 * alone still goes out in the same loop turn; under load, Postgres parses,
 * plans and answers one statement for many reads, and the process writes one
 * query instead of many (bench: payment-prod). DataLoader (graphql/dataloader)
 * does the collecting with its cache off, so no answer is ever reused.
 */
export function createSubscriptionStatusReader(deps: StatusDeps): SubscriptionStatusReader {
  const inflight = new Map<string, Promise<void>>();
  const reads = new DataLoader<StatusKey, CustomerWithSubscriptions | null>(
    (keys) => findCustomersWithSubscriptionsForProducts(deps.prisma, keys),
    { cache: false, maxBatchSize: MAX_READS_PER_STATEMENT, batchScheduleFn: (send) => setImmediate(send) },
  );

  function refresh(customer: CustomerRecord): Promise<void> {
    let pending = inflight.get(customer.userId);
    if (!pending) {
      pending = syncCustomerSubscriptions(deps, customer).finally(() => inflight.delete(customer.userId));
      inflight.set(customer.userId, pending);
    }
    return pending;
  }

  function isCheckoutPending(customer: CustomerRecord): boolean {
    const since = customer.checkoutPendingSince;
    return since !== null && deps.now().getTime() - since.getTime() < CHECKOUT_PENDING_MS;
  }

  function isFresh(at: Date | null): boolean {
    return at !== null && deps.now().getTime() - at.getTime() <= deps.maxAgeMs;
  }

  return {
    async getStatus({ userId, productId }) {
      // One round trip, shared with the reads that arrived alongside: the customer with their subscriptions of the product.
      const found = await reads.load({ userId, productId });
      if (!found) return SUBSCRIPTION_NONE;
      const { customer } = found;
      let chosen = chooseSubscription(found.subscriptions);
      const fresh = chosen ? isFresh(chosen.syncedAt) : isFresh(customer.subscriptionsSyncedAt);
      // A checkout is under way: the user may have paid a moment ago, before the webhook.
      const pending = isCheckoutPending(customer) && !(chosen && isEntitling(chosen.status));
      if (!fresh || pending) {
        await refresh(customer);
        chosen = chooseSubscription(await findSubscriptionsForProduct(deps.prisma, userId, productId));
        if (pending && chosen && isEntitling(chosen.status) && customer.checkoutPendingSince) {
          await clearCheckoutPending(deps.prisma, userId, customer.checkoutPendingSince);
        }
      }
      return chosen ? toStatusResponse(chosen, productId) : SUBSCRIPTION_NONE;
    },
  };
}
