import path from 'node:path';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, runServer } from '@platform/service-kit';
import { createApp, SERVICE_NAME } from './app';
import { loadPaymentEnv } from './env';
import { PrismaClient } from './generated/prisma/client';
import { createStripeClient } from './stripe-client';

async function main(): Promise<void> {
  const env = loadEnvOrExit(SERVICE_NAME, () => loadPaymentEnv());
  const logger = createLogger({ service: SERVICE_NAME, level: env.LOG_LEVEL });
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
  const app = createApp({ env, logger, prisma, kv, stripe });
  await runServer({
    app,
    port: env.PORT,
    host: env.HOST,
    logger,
    onClose: async () => {
      await prisma.$disconnect();
      await storage.close();
    },
  });
}

void main().catch((err: unknown) => {
  process.stderr.write(
    `${SERVICE_NAME}: failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
