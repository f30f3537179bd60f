import path from 'node:path';
import { openServiceStorage } from '@platform/db';
import { createHttpMetrics, createLogger } from '@platform/logging';
import {
  databasePoolMax,
  heapSurgeSettings,
  loadEnvOrExit,
  runServer,
  startTracing,
  storageTimeouts,
} from '@platform/service-kit';
import { createApp, SERVICE_NAME } from './app';
import { loadPaymentEnv } from './env';
import { PrismaClient } from './generated/prisma/client';
import { createStripeClient, placeholderStripeKeyWarning } from './stripe-client';
import { checkPriceCurrencies } from './usage/currency-check';
import { createMeterDirectory } from './usage/meter-directory';
import { readMeterConfig } from './usage/meters';
import { createUsageMetrics } from './usage/metrics';
import { startUsageSender } from './usage/sender';

/**
 * The service itself: env, storage (migrations under their advisory lock),
 * the app, and the HTTP server with its graceful shutdown. Runs in each
 * cluster worker, or as the one process (see ./main).
 */
export async function main(): Promise<void> {
  const env = loadEnvOrExit(SERVICE_NAME, () => loadPaymentEnv());
  const logger = createLogger({ service: SERVICE_NAME, level: env.LOG_LEVEL });
  // Before the app is built: its request span is added only while tracing is on (OTEL_* set).
  const tracing = startTracing({ service: SERVICE_NAME, env: env.OTEL ?? {} });
  const stripeKeyWarning = placeholderStripeKeyWarning(env);
  if (stripeKeyWarning) logger.warn(stripeKeyWarning);
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    ...storageTimeouts(env),
    redisUrl: env.REDIS_URL,
    keyPrefix: 'payment:',
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
    poolMax: databasePoolMax(env),
  });
  const { kv } = storage;
  const prisma = new PrismaClient({ adapter: storage.db.adapter });
  // Aborted at the drain deadline: Stripe calls still running then belong to requests answered 503.
  // The usage sender keeps its own client: its last flush at close must not be cut by the deadline.
  const drainDeadline = new AbortController();
  const stripe = createStripeClient(env, { abortSignal: drainDeadline.signal });
  const metrics = createHttpMetrics({ service: SERVICE_NAME });
  const usageMetrics = createUsageMetrics(metrics.registry, prisma);
  // Every process drains the outbox; row leases keep them off each other's rows.
  const now = () => new Date();
  const usageSender =
    env.PAYMENT_USAGE_SENDER === 'on'
      ? startUsageSender({ env, logger, prisma, stripe: createStripeClient(env), now, metrics: usageMetrics })
      : undefined;
  // Billing by cost: prices on a cost meter must be in its currency; mismatches are logged at start.
  checkPriceCurrencies({
    stripe,
    logger,
    meters: readMeterConfig(env),
    meterDirectory: createMeterDirectory(stripe),
  }).catch((err: unknown) => logger.warn({ err }, 'price currency check at start failed'));
  const app = createApp({
    env,
    logger,
    prisma,
    kv,
    stripe,
    now,
    metrics,
    usageMetrics,
    usageSender,
  });
  const closeAll = async (): Promise<void> => {
    await usageSender?.stop();
    await prisma.$disconnect();
    await storage.close();
    // The last spans (this shutdown's requests included) go out before the process ends.
    await tracing?.shutdown();
  };
  await runServer({
    app,
    port: env.PORT,
    host: env.HOST,
    logger,
    onClose: closeAll,
    onDrainDeadline: () => drainDeadline.abort(),
    heapSurge: heapSurgeSettings(env),
  });
}
