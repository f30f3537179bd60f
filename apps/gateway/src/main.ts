import path from 'node:path';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, runServer } from '@platform/service-kit';
import { loadLanesConfig } from './ai/lanes';
import { createApp, SERVICE_NAME } from './app';
import { closeApiKeyAuth } from './auth/api-key-auth';
import { loadGatewayEnv } from './env';
import { PrismaClient } from './generated/prisma/client';
import { createMailer } from './mail';
import { createUsageRecorder } from './usage/recorder';

async function main(): Promise<void> {
  const env = loadEnvOrExit(SERVICE_NAME, () => loadGatewayEnv());
  // A bad lanes config (e.g. a router model in the free lane) stops the start before anything is opened.
  loadLanesConfig(env.AI_LANES_CONFIG, env.AI_ALLOWED_LANES);
  const logger = createLogger({ service: SERVICE_NAME, level: env.LOG_LEVEL });
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    redisUrl: env.REDIS_URL,
    keyPrefix: 'gateway:',
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
  });
  const { kv } = storage;
  const prisma = new PrismaClient({ adapter: storage.db.adapter });
  const usage = createUsageRecorder({ prisma, logger });
  const mailer = createMailer(env, logger);
  const deps = { env, logger, prisma, kv, usage, mailer };
  const app = createApp(deps);
  await runServer({
    app,
    port: env.PORT,
    host: env.HOST,
    logger,
    onClose: async () => {
      // Buffered usage rows go out before the database connection closes.
      await usage.close();
      // Pending api_keys.last_used_at writes go out before the database closes.
      await closeApiKeyAuth(deps);
      await mailer.close();
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
