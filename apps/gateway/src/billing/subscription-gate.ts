import type { SubscriptionStatus } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { lruCache } from '../cache/lru';

/** Statuses that let a user into a paid lane: Stripe still delivers the service in them. */
export const ENTITLED_STATUSES: ReadonlySet<SubscriptionStatus> = new Set(['active', 'trialing']);

/** The one payment call the gate makes (`@platform/client`'s payment client fits). */
export type SubscriptionSource = {
  getSubscriptionStatus(
    params: { user_id: string; product_id: string },
    options?: { signal?: AbortSignal; timeoutMs?: number; retry?: false },
  ): Promise<{ status: SubscriptionStatus }>;
  isEntitled(
    userId: string,
    feature: string,
    options?: { signal?: AbortSignal; timeoutMs?: number; retry?: false },
  ): Promise<boolean>;
  /** payment's `GET /api/v1/usage-events/billable/{user_id}`: would usage on the meter land on an invoice. */
  getUsageBillable(
    userId: string,
    meter: string | undefined,
    options?: { signal?: AbortSignal; timeoutMs?: number; retry?: false },
  ): Promise<{ billable: boolean }>;
};

/**
 * What a paid lane requires: an entitled subscription to a product, or an
 * entitlement feature; with `billable`, also a subscription item with a price
 * on the lane's `meter` (payment's default when unset), so that the lane's
 * usage lands on an invoice (docs/billing.md, "Billable or held").
 */
export type LaneRequirement = ({ product: string } | { entitlement: string }) & {
  billable?: boolean;
  meter?: string | undefined;
};

export type SubscriptionGate = {
  /**
   * Resolves when the user has an entitled subscription to `product`; throws
   * `subscription_required` (402) when not, `service_unavailable` (503) when
   * payment cannot answer and nothing fresh is cached (fail closed).
   */
  require(userId: string, requirement: LaneRequirement): Promise<void>;
  /** Drops every cached answer of the user (payment's webhook notice, see routes). */
  forget(userId: string): void;
};

/**
 * Paid lanes' check, before a provider is called: payment's subscription status
 * (typed client), cached per user and product for `ttlMs` (positive and
 * negative answers alike). A cancellation reaches the gateway when payment's
 * webhook notice arrives (forget, broadcast to every instance), at the latest
 * after `ttlMs`. Concurrent checks of one user+product share one payment call.
 */
export function createSubscriptionGate(opts: {
  payment: SubscriptionSource;
  ttlMs: number;
  clock: Clock;
  logger: Logger;
  /** Time allowed for payment's answer on the request path. */
  timeoutMs: number;
}): SubscriptionGate {
  const cache = lruCache<string, { entitled: boolean }>({
    max: 50_000,
    ttlMs: opts.ttlMs,
    clock: opts.clock,
  });
  const inflight = new Map<string, Promise<boolean>>();
  // Bumped by forget(): an answer fetched before a notice is not cached after it.
  const epochs = new Map<string, number>();
  const keyOf = (userId: string, r: LaneRequirement) =>
    ('product' in r ? `${userId}\nproduct:${r.product}` : `${userId}\nentitlement:${r.entitlement}`) +
    (r.billable ? `\nmeter:${r.meter ?? ''}` : '');

  async function fetchEntitled(userId: string, requirement: LaneRequirement): Promise<boolean> {
    const epoch = epochs.get(userId) ?? 0;
    // One attempt: a user waits on it; payment down answers 503 at once.
    const call = { timeoutMs: opts.timeoutMs, retry: false } as const;
    try {
      const entitled =
        'product' in requirement
          ? ENTITLED_STATUSES.has(
              (
                await opts.payment.getSubscriptionStatus(
                  { user_id: userId, product_id: requirement.product },
                  call,
                )
              ).status,
            )
          : await opts.payment.isEntitled(userId, requirement.entitlement, call);
      const billable =
        entitled && requirement.billable
          ? (await opts.payment.getUsageBillable(userId, requirement.meter, call)).billable
          : entitled;
      if ((epochs.get(userId) ?? 0) === epoch) cache.set(keyOf(userId, requirement), { entitled: billable });
      return billable;
    } catch (err) {
      opts.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'subscription status unavailable; paid lane refused',
      );
      throw new AppError('service_unavailable', { cause: err });
    }
  }

  return {
    async require(userId, requirement) {
      const key = keyOf(userId, requirement);
      let entitled = cache.get(key)?.entitled;
      if (entitled === undefined) {
        let pending = inflight.get(key);
        if (!pending) {
          const started: Promise<boolean> = fetchEntitled(userId, requirement).finally(() => {
            if (inflight.get(key) === started) inflight.delete(key);
          });
          pending = started;
          inflight.set(key, started);
        }
        entitled = await pending;
      }
      if (!entitled) throw new AppError('subscription_required');
    },
    forget(userId) {
      epochs.set(userId, (epochs.get(userId) ?? 0) + 1);
      if (epochs.size > 100_000) epochs.clear();
      for (const key of cache.keys()) if (key.startsWith(`${userId}\n`)) cache.delete(key);
      // A lookup started before the notice may carry the old answer: later requests start their own.
      for (const key of inflight.keys()) if (key.startsWith(`${userId}\n`)) inflight.delete(key);
    },
  };
}
