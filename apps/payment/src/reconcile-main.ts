import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, runCommand, storageTimeouts } from '@platform/service-kit';
import { loadPaymentEnv } from './env';
import { PrismaClient } from './generated/prisma/client';
import { createStripeClient } from './stripe-client';
import { readMeterConfig } from './usage/meters';
import { RECONCILE_EXIT, runReconcileCli } from './usage/reconcile-cli';

/**
 * `node dist/reconcile-main.js [--from D] [--to D] [--expected FILE|-] [--json]`:
 * the usage reconciliation (docs/billing.md), with the payment service's own
 * environment. Logs go to stderr; the report to stdout.
 */
async function main(): Promise<number> {
  const env = loadEnvOrExit('payment-reconcile', () => loadPaymentEnv());
  const logger = createLogger({
    service: 'payment-reconcile',
    level: env.LOG_LEVEL,
    destination: process.stderr,
  });
  const meters = readMeterConfig(env);
  if (!meters) {
    process.stderr.write('PAYMENT_USAGE_METERS is not set: nothing to reconcile\n');
    return RECONCILE_EXIT.usage;
  }
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    ...storageTimeouts(env),
    redisUrl: undefined,
    keyPrefix: 'payment:',
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
  });
  const prisma = new PrismaClient({ adapter: storage.db.adapter });
  try {
    return await runReconcileCli({ prisma, stripe: createStripeClient(env), meters }, process.argv.slice(2), {
      readFile: (file) => readFile(file, 'utf8'),
      readStdin: () => text(process.stdin),
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
      now: () => new Date(),
    });
  } finally {
    await prisma.$disconnect();
    await storage.close();
  }
}

runCommand(main, (err) => `reconcile failed: ${err instanceof Error ? err.message : String(err)}`);
