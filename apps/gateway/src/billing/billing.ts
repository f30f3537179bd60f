import { createPaymentClient } from '@platform/client';
import { ZMeterName } from '@platform/contract';
import type { KeyValueStore } from '@platform/db';
import type { Logger, Registry } from '@platform/logging';
import type { Clock, ReadinessCheck } from '@platform/service-kit';
import { createInvalidationChannel, type InvalidationChannel } from '../cache/invalidation';
import type { GatewayEnv } from '../env';
import type { BillingRules } from './events';
import type { LaneBilling } from './lane-billing';
import { createShipperMetrics } from './metrics';
import { type CursorStore, createUsageShipper, type FeedReader, type UsageShipper } from './shipper';
import { createSubscriptionGate, type SubscriptionGate } from './subscription-gate';

/** The lanes config's billing parts (ai/config/lanes.ts). */
export type LanesBilling = {
  lanes: Record<string, { billing?: LaneBilling | undefined }>;
  media_billing?: LaneBilling | undefined;
};

/** Checks a caller may use a lane before a provider is called (paid lanes); null lane = media. */
export type LaneAccess = (userId: string, lane: string | null) => Promise<void>;

export type Billing = {
  rules: BillingRules;
  /** Undefined when payment is not configured. */
  shipper: UsageShipper | undefined;
  gate: SubscriptionGate | undefined;
  access: LaneAccess;
  /** Payment's notice that a user's subscription changed: every instance forgets its cached status. */
  subscriptionChanged(userId: string): Promise<void>;
  /** `billing` in /health/ready; undefined when payment is not configured (the report stays as before). */
  readiness: ReadinessCheck | undefined;
  start(): void;
  close(): Promise<void>;
};

const SUBSCRIPTION_CHANNEL = 'billing:subscriptions:invalidate';

/** The shipper's rules from the environment and the lanes config (docs/billing.md, "What is billed"). */
export function billingRulesOf(env: GatewayEnv, lanes: LanesBilling): BillingRules {
  const projectMeters = new Map<string, string>();
  for (const pair of env.BILLING_PROJECT_METERS) {
    const at = pair.lastIndexOf('=');
    if (at <= 0 || at === pair.length - 1)
      throw new Error(`BILLING_PROJECT_METERS: "${pair}" is not project=meter`);
    projectMeters.set(pair.slice(0, at), pair.slice(at + 1));
  }
  const modelMeters: Array<readonly [string, string]> = [];
  for (const pair of env.BILLING_MODEL_METERS) {
    const at = pair.lastIndexOf('=');
    const meter = pair.slice(at + 1);
    if (at <= 0 || !ZMeterName.safeParse(meter).success)
      throw new Error(`BILLING_MODEL_METERS: "${pair}" is not model_prefix=meter`);
    modelMeters.push([pair.slice(0, at), meter]);
  }
  modelMeters.sort((a, b) => b[0].length - a[0].length);
  const laneRules: Record<string, LaneBilling> = {};
  const media =
    env.BILLING_MEDIA_METER && !lanes.media_billing?.meter
      ? { ...(lanes.media_billing ?? { mode: 'metered' as const }), meter: env.BILLING_MEDIA_METER }
      : lanes.media_billing;
  for (const [name, lane] of Object.entries(lanes.lanes)) if (lane.billing) laneRules[name] = lane.billing;
  return {
    quantity: env.BILLING_QUANTITY,
    meter: env.BILLING_METER,
    billByok: env.BILLING_BYOK === 'bill',
    projectMeters,
    modelMeters,
    lanes: laneRules,
    media,
  };
}

/** One start-up line per lane (and media): where its usage goes (docs/billing.md, "Where usage goes"). */
function logWhereUsageGoes(logger: Logger, rules: BillingRules, names: string[], shipping: boolean): void {
  const lanes = names.map((lane) => [lane, rules.lanes[lane]] as const);
  const all: Array<readonly [string, LaneBilling | undefined]> = [...lanes, ['media', rules.media]];
  const where = Object.fromEntries(
    all.map(([lane, b]) => {
      const mode = b?.mode ?? 'metered';
      if (mode === 'free') return [lane, 'free: not billed'];
      const meter = rules.projectMeters.size > 0 ? 'project meter, else ' : '';
      const to = `meter ${meter}${b?.meter ?? rules.meter ?? "payment's default"}, by ${b?.quantity ?? rules.quantity}`;
      return [
        lane,
        mode === 'paid'
          ? `paid: ${to}; only users whose subscription has a price on that meter`
          : `metered: ${to}; users without a billable subscription are held by payment, not invoiced`,
      ];
    }),
  );
  logger.info(
    { lanes: where, shipping },
    shipping
      ? "usage billing: where each lane's usage goes"
      : 'usage billing: nothing is shipped from this process',
  );
}

/**
 * Usage billing and paid lanes, built once per process: payment's typed
 * client, the shipper (the ledger to payment, in the background) and the
 * subscription gate. Without PAYMENT_URL and PAYMENT_API_KEY nothing ships
 * and a paid lane refuses to start the service.
 *
 * Over 80 lines: a factory whose parts (shipper, subscription gate, metrics) share its options; each method is short.
 */
export function createBilling(opts: {
  env: GatewayEnv;
  lanes: LanesBilling;
  logger: Logger;
  kv: KeyValueStore;
  clock: Clock;
  registry: Registry;
  feed: FeedReader;
  cursor: CursorStore;
}): Billing {
  const { env, logger } = opts;
  const rules = billingRulesOf(env, opts.lanes);
  const paidLanes = Object.entries(rules.lanes).filter(([, b]) => b.mode === 'paid');
  const configured = Boolean(env.PAYMENT_URL && env.PAYMENT_API_KEY);
  logWhereUsageGoes(logger, rules, Object.keys(opts.lanes.lanes), configured && env.BILLING_SHIPPER === 'on');
  if (!configured && (paidLanes.length > 0 || rules.media?.mode === 'paid'))
    throw new Error('a paid lane needs PAYMENT_URL and PAYMENT_API_KEY (docs/billing.md)');

  const media = rules.media;
  // Cost in millionths on a meter that counts tokens would bill a picture as
  // a million tokens: refuse to start rather than send one wrong invoice.
  if (
    configured &&
    media?.mode !== 'free' &&
    !media?.meter &&
    (media?.quantity ?? 'cost_micros') !== rules.quantity
  )
    throw new Error(
      `media requests are billed by ${media?.quantity ?? 'cost_micros'} but the lanes' meter counts ${rules.quantity}: give media_billing (or BILLING_MEDIA_METER) a meter of its own, or set its quantity or mode (docs/billing.md)`,
    );
  const payment =
    env.PAYMENT_URL && env.PAYMENT_API_KEY
      ? createPaymentClient({ baseUrl: env.PAYMENT_URL, apiKey: env.PAYMENT_API_KEY, timeoutMs: 30_000 })
      : undefined;
  const shipper =
    payment && env.BILLING_SHIPPER === 'on'
      ? createUsageShipper({
          rules,
          feed: opts.feed,
          cursor: opts.cursor,
          // One attempt per round: the shipper's own backoff spaces the retries.
          payment: {
            recordUsageEvents: (request, call) =>
              payment.recordUsageEvents(request, { ...call, retry: false }),
          },
          logger,
          clock: opts.clock,
          metrics: createShipperMetrics(opts.registry),
          batchSize: env.BILLING_BATCH_SIZE,
          idleMs: env.BILLING_IDLE_MS,
          leaseMs: env.BILLING_LEASE_SECONDS * 1000,
          retryBaseMs: env.BILLING_RETRY_BASE_MS,
          retryMaxMs: env.BILLING_RETRY_MAX_MS,
        })
      : undefined;
  const gate = payment
    ? createSubscriptionGate({
        payment,
        ttlMs: env.BILLING_SUBSCRIPTION_CACHE_SECONDS * 1000,
        timeoutMs: env.BILLING_SUBSCRIPTION_TIMEOUT_MS,
        clock: opts.clock,
        logger,
      })
    : undefined;
  const channel: InvalidationChannel | undefined = gate
    ? createInvalidationChannel({
        kv: opts.kv,
        logger,
        channel: SUBSCRIPTION_CHANNEL,
        drop: (u) => gate.forget(u),
      })
    : undefined;

  const access: LaneAccess = async (userId, lane) => {
    const billing = lane === null ? rules.media : rules.lanes[lane];
    if (billing?.mode !== 'paid') return;
    if (!gate) throw new Error('paid lane without payment');
    channel?.ensureSubscribed();
    // The lane's usage must land on an invoice: a subscription item with a price on its meter.
    const meter = billing.meter ?? rules.meter;
    await gate.require(
      userId,
      billing.product !== undefined
        ? { product: billing.product, billable: true, meter }
        : { entitlement: billing.entitlement ?? '', billable: true, meter },
    );
  };

  return {
    rules,
    shipper,
    gate,
    access,
    async subscriptionChanged(userId) {
      gate?.forget(userId);
      await channel?.publish(userId);
    },
    readiness: payment && {
      name: 'billing',
      required: false,
      check: async () => !shipper || shipper.status().consecutiveFailures === 0,
      details: async () => ({ shipper: shipper ? shipper.status() : { running: false } }),
    },
    start() {
      channel?.ensureSubscribed();
      shipper?.start();
    },
    async close() {
      await shipper?.stop();
      await channel?.close();
    },
  };
}
