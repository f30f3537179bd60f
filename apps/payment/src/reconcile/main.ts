import path from 'node:path';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, storageTimeouts } from '@platform/service-kit';
import { loadPaymentEnv } from '../env';
import { PrismaClient } from '../generated/prisma/client';
import { createStripeClient } from '../stripe-client';
import { runReconciliation } from './reconcile';

/**
 * `node dist/reconcile/main.js` (the `payment-reconcile` CronJob) or
 * `npm run reconcile -w @platform/payment`: one reconciliation run with the
 * service's own environment. Logs the report; exits 1 when anything failed,
 * so the Job shows it (the next run retries).
 */
async function main(): Promise<void> {
  const env = loadEnvOrExit('payment-reconcile', () => loadPaymentEnv());
  const logger = createLogger({ service: 'payment-reconcile', level: env.LOG_LEVEL });
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    ...storageTimeouts(env),
    redisUrl: env.REDIS_URL,
    keyPrefix: 'payment:',
    migrationsDir: path.join(__dirname, '..', '..', 'prisma', 'migrations'),
    logger,
  });
  const prisma = new PrismaClient({ adapter: storage.db.adapter });
  try {
    const report = await runReconciliation({
      prisma,
      stripe: createStripeClient(env),
      logger,
      now: () => new Date(),
      env,
    });
    logger.info({ report }, 'reconciliation finished');
    if (report.events.failed > 0 || report.customers.failed > 0) process.exitCode = 1;
  } finally {
    await prisma.$disconnect();
    await storage.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
