import { randomUUID } from 'node:crypto';
import { createHttpMetrics, createLogger, createMemoryDestination } from '@platform/logging';
import type { FakeMeter, FakePrice, FakeSubscription, StripeFake } from '@platform/testing';
import type Stripe from 'stripe';
import request from 'supertest';
import type { PrismaClient } from '../../src/generated/prisma/client';
import { upsertSubscriptionSnapshot } from '../../src/subscriptions/repo';
import { toSnapshot } from '../../src/subscriptions/snapshot';
import type { MeterConfig } from '../../src/usage/meters';
import { createUsageMetrics } from '../../src/usage/metrics';
import type { RecordUsageDeps } from '../../src/usage/record-usage';
import { startUsageSender, type UsageSender } from '../../src/usage/sender';
import type { Target } from './endpoints';
import { API_KEY, type Harness } from './harness';

/** Env of an app and senders that bill usage, with retries fast enough for a test. */
export const USAGE_ENV = {
  PAYMENT_USAGE_METERS: 'tokens=ai_tokens,cost=ai_cost',
  PAYMENT_USAGE_DEFAULT_METER: 'tokens',
  PAYMENT_USAGE_SENDER_IDLE_MS: '50',
  PAYMENT_USAGE_RETRY_BASE_MS: '40',
  PAYMENT_USAGE_RETRY_MAX_MS: '400',
  PAYMENT_USAGE_SENDER_RATE_PER_SECOND: '1000',
  PAYMENT_USAGE_SENDER_BATCH: '25',
} as const;

export type UsageEventInput = {
  id?: string;
  user_id: string;
  meter?: string;
  value: number;
  timestamp?: string;
};

export function usageEvent(input: UsageEventInput) {
  return { id: randomUUID(), timestamp: new Date().toISOString(), ...input };
}

export function postUsage(target: Target, events: unknown[]) {
  return request(target).post('/api/v1/usage-events').set('X-API-Key', API_KEY).send({ events });
}

/** A sender on the harness's database and fake, as every payment process runs one. */
export function startTestSender(h: Harness, env: Record<string, string> = {}): UsageSender {
  const deps = h.deps({ ...USAGE_ENV, ...env });
  return startUsageSender({
    ...deps,
    metrics: createUsageMetrics(
      createHttpMetrics({ service: 'payment', defaultMetrics: false }).registry,
      deps.prisma,
    ),
  });
}

/** What `recordUsageEvents` needs, for a test that stores events without an app. */
export function recordDeps(prisma: PrismaClient, meters: MeterConfig | undefined): RecordUsageDeps {
  return {
    prisma,
    now: () => new Date(),
    meters,
    logger: createLogger({ service: 'payment', destination: createMemoryDestination() }),
    env: { PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS: 600 },
    metrics: { refused: () => undefined },
  };
}

/**
 * Makes `userId` a customer with a subscription whose item has a metered
 * price on the fake's meter for `eventName`, as Stripe holds it; `sync`
 * (default true) stores it in payment (POST /api/v1/sync/{user_id}), as a
 * webhook would. Returns the Stripe objects.
 */
export async function subscribeToMeter(
  h: Harness,
  app: Target,
  userId: string,
  eventName: string,
  opts: { currency?: string; periodStart?: Date; periodEnd?: Date; sync?: boolean; customer?: string } = {},
): Promise<{ customer: string; price: FakePrice; subscription: FakeSubscription; meter: FakeMeter }> {
  const meter = [...h.fake.store.billingMeters.meters.values()].find((m) => m.event_name === eventName);
  if (!meter) throw new Error(`no meter ${eventName} in the fake`);
  let customer = opts.customer;
  if (!customer) {
    customer = h.fake.seedCustomer({ metadata: { user_id: userId } }).id;
    await h.prisma.customer.create({
      data: { userId, stripeCustomerId: customer, email: `${userId}@example.com` },
    });
  }
  const price = h.fake.seedPrice({
    currency: opts.currency ?? 'usd',
    unit_amount: 2,
    recurring: { interval: 'month', usage_type: 'metered', meter: meter.id },
  });
  const start = Math.floor((opts.periodStart ?? h.clock.now()).getTime() / 1000);
  const subscription = h.fake.seedSubscription({
    customer,
    created: start,
    items: [
      {
        price: price.id,
        current_period_start: start,
        ...(opts.periodEnd ? { current_period_end: Math.floor(opts.periodEnd.getTime() / 1000) } : {}),
      },
    ],
  });
  if (opts.sync !== false) await syncUser(app, userId);
  return { customer, price, subscription, meter };
}

/** As subscribeToMeter, stored straight into payment's database (no app): for tests that run payment as a process. */
export async function seedMeteredSubscription(
  fake: StripeFake,
  prisma: PrismaClient,
  userId: string,
  eventName: string,
  periodStart: Date,
): Promise<string> {
  const meter = [...fake.store.billingMeters.meters.values()].find((m) => m.event_name === eventName);
  if (!meter) throw new Error(`no meter ${eventName} in the fake`);
  const customer = fake.seedCustomer({ metadata: { user_id: userId } }).id;
  await prisma.customer.create({
    data: { userId, stripeCustomerId: customer, email: `${userId}@example.com` },
  });
  const price = fake.seedPrice({ unit_amount: 2, recurring: { interval: 'month', meter: meter.id } });
  const start = Math.floor(periodStart.getTime() / 1000);
  const subscription = fake.seedSubscription({
    customer,
    created: start,
    items: [{ price: price.id, current_period_start: start }],
  });
  await upsertSubscriptionSnapshot(prisma, {
    userId,
    snapshot: toSnapshot(subscription as unknown as Stripe.Subscription),
    syncedAt: new Date(),
  });
  return customer;
}

/** POST /api/v1/sync/{user_id}: payment re-reads the user's subscriptions from Stripe. */
export async function syncUser(app: Target, userId: string): Promise<void> {
  await request(app).post(`/api/v1/sync/${userId}`).set('X-API-Key', API_KEY).expect(200);
}

/** Waits until `check` holds, polling; fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
