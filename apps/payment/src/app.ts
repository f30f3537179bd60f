import { buildPaymentOpenApi } from '@platform/contract';
import type { KeyValueStore } from '@platform/db';
import { errorHandler, jsonBody, notFoundHandler } from '@platform/errors';
import { createHttpMetrics, healthRoutes, httpLogger, type Logger, requestId } from '@platform/logging';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type Stripe from 'stripe';
import type { PaymentEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';

/** Everything the app needs from outside; main.ts builds it, tests build their own. */
export type PaymentDeps = {
  env: PaymentEnv;
  logger: Logger;
  prisma: PrismaClient;
  kv: KeyValueStore;
  stripe: Stripe;
};

export const SERVICE_NAME = 'payment';

export function createApp(deps: PaymentDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.env.TRUST_PROXY_HOPS);
  app.set('query parser', 'simple');

  const metrics = createHttpMetrics({ service: SERVICE_NAME });
  app.use(requestId());
  app.use(metrics.middleware);
  app.use(httpLogger(deps.logger));
  app.use(helmet());

  app.use(healthRoutes(SERVICE_NAME, () => buildPaymentOpenApi()));
  app.get('/metrics', metrics.handler);

  app.use(jsonBody('100kb'));

  app.use(notFoundHandler());
  app.use(errorHandler({ logger: deps.logger }));
  return app;
}
