import path from 'node:path';
import type { KeyValueStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import {
  createTestDatabase,
  createTestKv,
  type PrivateStorage,
  type StripeFake,
  startStripeFake,
  type TestDatabase,
} from '@platform/testing';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { PaymentDeps } from '../../src/deps';
import { loadPaymentEnv, type PaymentEnv } from '../../src/env';
import { PrismaClient } from '../../src/generated/prisma/client';
import { createStripeClient } from '../../src/stripe-client';

export const API_KEY = 'test-payment-key-primary-0123';
export const ROTATED_API_KEY = 'test-payment-key-rotated-4567';
export const STRIPE_KEY = 'sk_test_payment_harness_0001';
export const WEBHOOK_SECRET = 'whsec_payment_harness_secret';

/** The return URLs of every checkout body in these tests. */
export const urls = {
  success_url: 'https://app.example.com/done',
  cancel_url: 'https://app.example.com/cancel',
};

/** The payment service's migrations, for createTestDatabase. */
export const PAYMENT_MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'prisma', 'migrations');

/** A movable clock: the app and the Stripe fake read the same time. */
export type TestClock = { now(): Date; advance(ms: number): void; set(date: Date): void };

function createClock(start = new Date()): TestClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
    set: (date) => {
      current = date.getTime();
    },
  };
}

/** One test file's world: a fresh database, a Stripe fake and a way to build the app on them. */
export type Harness = {
  fake: StripeFake;
  prisma: PrismaClient;
  clock: TestClock;
  logs: ReturnType<typeof createMemoryDestination>;
  /** The app with the default test env, built once. */
  app: Express;
  /** Builds another app on the same database and fake with some env variables changed. */
  buildApp(env?: Record<string, string | undefined>, deps?: Partial<PaymentDeps>): Express;
  deps(env?: Record<string, string | undefined>): PaymentDeps;
  close(): Promise<void>;
};

export function testEnv(fake: StripeFake, overrides: Record<string, string | undefined> = {}): PaymentEnv {
  return loadPaymentEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    PAYMENT_MS_API_KEY: `${API_KEY},${ROTATED_API_KEY}`,
    STRIPE_SECRET_KEY: STRIPE_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: fake.url,
    STRIPE_MAX_NETWORK_RETRIES: '0',
    STRIPE_TIMEOUT_MS: '2000',
    ...overrides,
  });
}

export async function startHarness(
  /** Servers other than the shared test ones, e.g. the private Redis or Postgres a fault test stops. */
  storage: Partial<PrivateStorage['urls']> = {},
): Promise<Harness> {
  const clock = createClock();
  const fake = await startStripeFake({ now: () => Math.floor(clock.now().getTime() / 1000) });
  const database: TestDatabase = await createTestDatabase({
    migrationsDir: PAYMENT_MIGRATIONS_DIR,
    serverUrl: storage.databaseServerUrl,
  });
  const prisma = new PrismaClient({ adapter: database.adapter });
  // One store per app, so counters and idempotency fingerprints of one test's app never leak into another's.
  const stores: KeyValueStore[] = [];
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'payment', destination: logs });
  const deps = (env: Record<string, string | undefined> = {}): PaymentDeps => {
    const parsed = testEnv(fake, env);
    const kv = createTestKv({ url: storage.redisUrl });
    stores.push(kv);
    return { env: parsed, logger, prisma, kv, stripe: createStripeClient(parsed), now: clock.now };
  };
  return {
    fake,
    prisma,
    clock,
    logs,
    app: createApp(deps()),
    buildApp: (env, extra) => createApp({ ...deps(env), ...extra }),
    deps,
    async close() {
      await prisma.$disconnect();
      await database.drop();
      await Promise.all(stores.map((kv) => kv.close()));
      await fake.close();
    },
  };
}

let sequence = 0;

/** A user id no other test uses. */
export function newUserId(label = 'user'): string {
  sequence += 1;
  return `${label}_${process.pid}_${Date.now().toString(36)}_${sequence}`;
}

/** Seeds a product with a monthly and a one-time price. */
export function seedCatalog(fake: StripeFake, label = 'pro') {
  sequence += 1;
  const product = fake.seedProduct({ id: `prod_${label}_${sequence}`, name: label });
  const monthly = fake.seedPrice({
    id: `price_${label}_monthly_${sequence}`,
    product: product.id,
    unit_amount: 900,
    recurring: { interval: 'month' },
  });
  const oneTime = fake.seedPrice({
    id: `price_${label}_once_${sequence}`,
    product: product.id,
    unit_amount: 500,
  });
  return { product, monthly, oneTime };
}

/** POST /api/v1/checkout/subscription for a seeded product's monthly price, with the primary key. */
export function requestSubscriptionCheckout(
  app: Express,
  catalog: { product: { id: string }; monthly: { id: string } },
  userId = newUserId(),
) {
  const { product, monthly } = catalog;
  return request(app)
    .post('/api/v1/checkout/subscription')
    .set('X-API-Key', API_KEY)
    .send({
      user_id: userId,
      email: 'a@example.com',
      product_id: product.id,
      price_id: monthly.id,
      ...urls,
    });
}
