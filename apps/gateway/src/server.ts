import path from 'node:path';
import { openServiceStorage, type RedisKeyValueStore } from '@platform/db';
import { createLogger } from '@platform/logging';
import {
  databasePoolMax,
  heapSurgeSettings,
  loadEnvOrExit,
  runServer,
  startTracing,
  storageTimeouts,
} from '@platform/service-kit';
import { loadServiceLanes } from './ai/config/priced-targets';
import { createApp } from './app';
import { buildGatewayDeps, closeGatewayDeps, SERVICE_NAME } from './deps';
import { loadGatewayEnv } from './env';
import type * as GeneratedPrisma from './generated/prisma/client';
import { lazyPrismaClient } from './lazy-prisma';
import { warnIfMailerUnreachable } from './mail';
import { compileQueryCompilerFromFile } from './prisma-compiler';
import { assertRedisKeepsMoney } from './usage/redis-keeps-money';

/**
 * The service itself: env, storage (migrations under their advisory lock),
 * the app, and the HTTP server with its graceful shutdown. Runs in each
 * cluster worker, or as the one process (see ./main).
 */
export async function main(): Promise<void> {
  const env = loadEnvOrExit(SERVICE_NAME, () => loadGatewayEnv());
  // A bad lanes config (e.g. a router model in the free lane) stops the start before anything is opened.
  // In production a target without a price is refused too: a configuration error, not a free ride.
  const lanes = loadServiceLanes(env, Date.now());
  const logger = createLogger({ service: SERVICE_NAME, level: env.LOG_LEVEL });
  // Before the app is built: its request span is added only while tracing is on (OTEL_* set).
  const tracing = startTracing({ service: SERVICE_NAME, env: env.OTEL ?? {} });
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    ...storageTimeouts(env),
    redisUrl: env.REDIS_URL,
    keyPrefix: env.REDIS_KEY_PREFIX,
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
    poolMax: databasePoolMax(env),
  });
  if (env.NODE_ENV === 'production' && storage.kv.kind === 'redis') {
    // Redis holds the only copy of the ledger backlog and the budget counters.
    await assertRedisKeepsMoney((storage.kv as RedisKeyValueStore).redis, {
      managed: env.REDIS_PERSISTENCE_MANAGED,
      logger,
    });
  }
  // Made by the first console or admin call in this worker, never by AI requests (lazy-prisma.ts).
  const prisma = lazyPrismaClient(() => {
    const { PrismaClient } = require('./generated/prisma/client') as typeof GeneratedPrisma;
    const made = new PrismaClient({ adapter: storage.db.adapter });
    if (!compileQueryCompilerFromFile(made))
      logger.warn("prisma's engine config moved: its query compiler's base64 stays in memory (issue 46)");
    return made;
  });
  const deps = buildGatewayDeps({ env, lanes, logger, prisma, sql: storage.db, kv: storage.kv });
  // Not awaited: a slow mail server must not delay the start, only be reported.
  void warnIfMailerUnreachable(deps.mailer, env.SMTP_URL, logger);
  const closeAll = async (): Promise<void> => {
    // Buffered usage rows and last-used writes go out before the database closes.
    await closeGatewayDeps(deps);
    await prisma.$disconnect();
    await storage.close();
    // The last spans (this shutdown's requests included) go out before the process ends.
    await tracing?.shutdown();
  };
  await runServer({
    app: createApp(deps),
    port: env.PORT,
    host: env.HOST,
    logger,
    onClose: closeAll,
    heapSurge: heapSurgeSettings(env),
  });
}
