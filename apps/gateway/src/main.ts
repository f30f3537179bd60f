import path from 'node:path';
import { applyMigrations, createKeyValueStore, openDatabase } from '@platform/db';
import { loadEnvOrExit } from '@platform/errors';
import { createLogger, runServer } from '@platform/logging';
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
  const db = await openDatabase({
    url: env.DATABASE_URL,
    dataDir: env.DATABASE_URL ? undefined : env.DATA_DIR,
    logger,
  });
  const { applied } = await applyMigrations({
    db,
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
  });
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  if (!env.DATABASE_URL)
    logger.warn({ dataDir: env.DATA_DIR }, 'DATABASE_URL unset: embedded PGlite database');
  if (!env.REDIS_URL) logger.warn('REDIS_URL unset: in-process stores (single instance only)');
  const prisma = new PrismaClient({ adapter: db.adapter });
  const kv = createKeyValueStore({ url: env.REDIS_URL, keyPrefix: 'gateway:' });
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
      await db.close();
      await kv.close();
    },
  });
}

void main().catch((err: unknown) => {
  process.stderr.write(
    `${SERVICE_NAME}: failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
