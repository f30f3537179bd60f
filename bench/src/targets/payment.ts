import { createLogger } from '@platform/logging';
import {
  createApp,
  createStripeClient,
  loadPaymentEnv,
  PAYMENT_MIGRATIONS_DIR,
  type PaymentDeps,
  PrismaClient,
} from '@platform/payment/testing';
import {
  createTestDatabase,
  createTestKv,
  type StripeFake,
  startStripeFake,
  type TestDatabase,
} from '@platform/testing';
import { listenOnLoopback } from './listen';
import { createLogSink, type LogSink } from './log-sink';

export const PAYMENT_API_KEY = 'bench-payment-key-0123456789';

/** The payment service on loopback with one user holding an active subscription. */
export type PaymentTarget = {
  url: string;
  apiKey: string;
  userId: string;
  productId: string;
  subscriptionId: string;
  stripe: StripeFake;
  /** Requests the Stripe fake has received so far. */
  stripeCalls(): number;
  database: TestDatabase;
  kvKind: 'redis' | 'memory';
  logs: LogSink;
  close(): Promise<void>;
};

/** The first read finds no snapshot and fetches it from Stripe; afterwards it is fresh for an hour. */
async function primeSnapshot(url: string): Promise<void> {
  const res = await fetch(url, { headers: { 'x-api-key': PAYMENT_API_KEY } });
  const body = await res.text();
  if (res.status !== 200 || !body.includes('"status":"active"')) {
    throw new Error(`priming the subscription snapshot failed: ${res.status} ${body.slice(0, 300)}`);
  }
}

/** Payment's env for the Stripe fake at `stripeUrl`: test keys, no retries, a rate limit out of reach. */
export function benchPaymentEnv(stripeUrl: string): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: 'sk_test_bench_0001',
    STRIPE_WEBHOOK_SECRET: 'whsec_bench_secret',
    STRIPE_API_BASE: stripeUrl,
    STRIPE_MAX_NETWORK_RETRIES: '0',
    STRIPE_TIMEOUT_MS: '2000',
    PAYMENT_RATE_LIMIT_PER_MINUTE: '1000000000',
    // The peers bench runs payment with NODE_ENV=production; the fake takes test keys only.
    PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION: 'true',
  };
}

/**
 * Seeds the Stripe fake with a customer holding an active monthly subscription
 * to `prod_bench`, and our customer row for that user.
 */
export async function seedActiveSubscription(stripe: StripeFake, prisma: PrismaClient) {
  const userId = `bench_user_${process.pid}`;
  const customer = stripe.seedCustomer({ email: 'bench@example.com', metadata: { user_id: userId } });
  await prisma.customer.create({
    data: { userId, stripeCustomerId: customer.id, email: 'bench@example.com' },
  });
  const product = stripe.seedProduct({ id: 'prod_bench', name: 'bench' });
  const price = stripe.seedPrice({
    id: 'price_bench_monthly',
    product: product.id,
    unit_amount: 900,
    recurring: { interval: 'month' },
  });
  const subscription = stripe.seedSubscription({ customer: customer.id, items: [{ price: price.id }] });
  return { userId, product, subscription };
}

/**
 * Builds the payment service the way apps/payment/test/support/harness.ts does
 * (same env, Stripe fake, createTestDatabase/createTestKv, createApp), except:
 * the wall clock, a counting log sink at `info`, and a rate limit out of reach.
 * Seeds a Stripe customer with an active subscription and our customer row;
 * the first status read stores the snapshot, so later reads come from the
 * database alone (the scenario checks that Stripe is not called).
 */
export async function startPaymentTarget(): Promise<PaymentTarget> {
  const stripe = await startStripeFake();
  const database = await createTestDatabase({ migrationsDir: PAYMENT_MIGRATIONS_DIR });
  const prisma = new PrismaClient({ adapter: database.adapter });
  const kv = createTestKv();
  const logs = createLogSink();
  const logger = createLogger({ service: 'payment', destination: logs, level: 'info' });
  const env = loadPaymentEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    PAYMENT_MS_API_KEY: PAYMENT_API_KEY,
    ...benchPaymentEnv(stripe.url),
  });
  const deps: PaymentDeps = {
    env,
    logger,
    prisma,
    kv,
    stripe: createStripeClient(env),
    now: () => new Date(),
  };
  const app = createApp(deps);

  const { userId, product, subscription } = await seedActiveSubscription(stripe, prisma);
  const listening = await listenOnLoopback(app);
  await primeSnapshot(`${listening.url}/api/v1/subscriptions/${userId}/${product.id}`);

  return {
    url: listening.url,
    apiKey: PAYMENT_API_KEY,
    userId,
    productId: product.id,
    subscriptionId: subscription.id,
    stripe,
    stripeCalls: () => stripe.requests.length,
    database,
    kvKind: kv.kind,
    logs,
    async close() {
      await listening.close();
      await prisma.$disconnect();
      await database.drop();
      await kv.close();
      await stripe.close();
    },
  };
}
