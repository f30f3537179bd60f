import path from 'node:path';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, runServer } from '@platform/service-kit';
import { createApp, SERVICE_NAME } from './app';
import { loadPaymentEnv } from './env';
import { PrismaClient } from './generated/prisma/client';
import { createStripeClient, placeholderStripeKeyWarning } from './stripe-client';

/**
 * The service itself: env, storage (migrations under their advisory lock),
 * the app, and the HTTP server with its graceful shutdown. Runs in each
 * cluster worker, or as the one process (see ./main).
 */
export async function main(): Promise<void> {
  const env = loadEnvOrExit(SERVICE_NAME, () => loadPaymentEnv());
  const logger = createLogger({ service: SERVICE_NAME, level: env.LOG_LEVEL });
  const stripeKeyWarning = placeholderStripeKeyWarning(env);
  if (stripeKeyWarning) logger.warn(stripeKeyWarning);
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    redisUrl: env.REDIS_URL,
    keyPrefix: 'payment:',
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
  });
  const { kv } = storage;
  const prisma = new PrismaClient({ adapter: storage.db.adapter });
  const stripe = createStripeClient(env);
  const app = createApp({ env, logger, prisma, kv, stripe, now: () => new Date() });
  const closeAll = async (): Promise<void> => {
    await prisma.$disconnect();
    await storage.close();
  };
  await runServer({ app, port: env.PORT, host: env.HOST, logger, onClose: closeAll });
}
