import path from 'node:path';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, runCommand, storageTimeouts } from '@platform/service-kit';
import { loadPaymentEnv } from './env';
import { PrismaClient } from './generated/prisma/client';
import { createStripeClient } from './stripe-client';
import { runLateCli } from './usage/late-cli';

/**
 * `node dist/usage-late-main.js [--user U] [--bill] [--json]`: usage too late
 * for its invoice, and billing it by hand (docs/billing.md, "Late events"),
 * with the payment service's own environment. Logs go to stderr.
 */
async function main(): Promise<number> {
  const env = loadEnvOrExit('payment-usage-late', () => loadPaymentEnv());
  const logger = createLogger({
    service: 'payment-usage-late',
    level: env.LOG_LEVEL,
    destination: process.stderr,
  });
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
    return await runLateCli({ prisma, stripe: createStripeClient(env) }, process.argv.slice(2), {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    await prisma.$disconnect();
    await storage.close();
  }
}

runCommand(main, (err) => `usage-late failed: ${err instanceof Error ? err.message : String(err)}`);
