import { buildGatewayOpenApi } from '@platform/contract';
import type { KeyValueStore } from '@platform/db';
import { errorHandler, notFoundHandler } from '@platform/errors';
import { createServiceApp, healthRoutes, type Logger } from '@platform/logging';
import type { Express } from 'express';
import { createAiApi } from './ai/module';
import { apiKeyRoutes } from './api-keys/routes';
import { authRoutes } from './auth/routes';
import type { Clock } from './auth/types';
import { consoleRoutes } from './console/routes';
import type { GatewayEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';
import { corsPolicy } from './http/cors';
import { createMailer, type Mailer } from './mail';
import type { UsageRecorder } from './usage/recorder';
import { userRoutes } from './users/routes';

/** Everything the app needs from outside; main.ts builds it, tests build their own. */
export type GatewayDeps = {
  env: GatewayEnv;
  logger: Logger;
  prisma: PrismaClient;
  kv: KeyValueStore;
  /** Sign-in mail; absent -> chosen from SMTP_URL (log mailer outside production). */
  mailer?: Mailer;
  /** Current time for sessions, codes and key usage; absent -> the system clock. */
  clock?: Clock;
  /** Batched usage writer; main.ts flushes it on shutdown. Absent -> one is made (rows flushed every second). */
  usage?: UsageRecorder;
};

export const SERVICE_NAME = 'gateway';

export function createApp(deps: GatewayDeps): Express {
  const { app, metrics } = createServiceApp({
    service: SERVICE_NAME,
    logger: deps.logger,
    trustProxyHops: deps.env.TRUST_PROXY_HOPS,
  });
  app.use(corsPolicy(deps));

  app.use(healthRoutes(SERVICE_NAME, () => buildGatewayOpenApi({ serverUrl: deps.env.GATEWAY_PUBLIC_URL })));
  app.get('/metrics', metrics.handler);
  app.use('/api/v1', authRoutes(deps, deps.mailer ?? createMailer(deps.env, deps.logger)));
  app.use('/api/v1', apiKeyRoutes(deps));
  app.use('/api/v1', userRoutes(deps));
  app.use('/api/v1', createAiApi(deps, { registry: metrics.registry }).router);
  app.use(consoleRoutes(deps));

  app.use(notFoundHandler());
  app.use(errorHandler({ logger: deps.logger }));
  return app;
}
