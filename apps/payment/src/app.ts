import { errorHandler, notFoundHandler } from '@platform/errors';
import {
  createHealthRouter,
  createServiceApp,
  jsonBody,
  metricsAccess,
  storageReadiness,
} from '@platform/service-kit';
import { type Express, Router } from 'express';
import { requireApiKey } from './auth/api-key';
import { createCheckoutRouter } from './checkout/routes';
import type { PaymentDeps } from './deps';
import { createEntitlementRouter } from './entitlements/routes';
import { createPortalRouter } from './portal/routes';
import { createPurchaseRouter } from './purchases/routes';
import { apiRateLimit } from './rate-limit/api-rate-limit';
import { createSubscriptionStatusReader } from './subscriptions/get-status';
import { createGatewayNotifier } from './subscriptions/notify-gateway';
import { createSubscriptionRouter } from './subscriptions/routes';
import { createSyncRouter } from './sync/routes';
import { checkUserCurrencies } from './usage/currency-check';
import { createMeterDirectory } from './usage/meter-directory';
import { readMeterConfig } from './usage/meters';
import { createUsageMetrics } from './usage/metrics';
import { usageReadiness } from './usage/readiness';
import { createThinEventRouter, createUsageRouter } from './usage/routes';
import { createWebhookRouter } from './webhooks/routes';

export type { PaymentDeps } from './deps';

export const SERVICE_NAME = 'payment';

/** Largest JSON body of an /api/v1 call; a full 100-item cart is far below it. */
const API_BODY_LIMIT = '100kb';

/**
 * Builds the payment service. Order: request id, metrics, access log, helmet;
 * public routes (health, OpenAPI and its /docs page, metrics, the Stripe webhook
 * on its raw body);
 * then /api/v1: API key, per-key rate limit, JSON body, routes. Authentication
 * runs before body parsing so an anonymous caller never gets a body parsed.
 */
export function createApp(deps: PaymentDeps): Express {
  const { app, metrics } = createServiceApp({
    service: SERVICE_NAME,
    logger: deps.logger,
    trustProxyHops: deps.env.TRUST_PROXY_HOPS,
    metrics: deps.metrics,
  });
  const usageMetrics = deps.usageMetrics ?? createUsageMetrics(metrics.registry, deps.prisma);
  const meters = readMeterConfig(deps.env);
  const meterDirectory = createMeterDirectory(deps.stripe);
  // On every stored subscription change: are the prices on cost meters in the configured currency.
  const checkCurrencies = (userId: string) => {
    checkUserCurrencies({ ...deps, meters, meterDirectory }, userId).catch((err: unknown) =>
      deps.logger.warn({ err, userId }, 'price currency check failed'),
    );
  };
  const notifyGateway = createGatewayNotifier({
    url: deps.env.GATEWAY_SUBSCRIPTION_NOTIFY_URL,
    token: deps.env.GATEWAY_SERVICE_TOKEN,
    logger: deps.logger,
  });

  app.use(
    // Loaded when /openapi.json is first asked for: the generator is in no idle worker (issue 46).
    createHealthRouter(SERVICE_NAME, () => openApi().buildPaymentOpenApi(), [
      ...storageReadiness({ queryDatabase: () => deps.prisma.$queryRaw`SELECT 1`, kv: deps.kv }),
      usageReadiness(usageMetrics, deps.usageSender),
    ]),
  );
  app.get('/metrics', metricsAccess(deps.env.METRICS_TOKEN), metrics.handler);
  app.use(
    createWebhookRouter({
      ...deps,
      onSubscriptionStored: (userId) => {
        notifyGateway?.(userId);
        checkCurrencies(userId);
      },
    }),
  );
  app.use(createThinEventRouter({ ...deps, metrics: usageMetrics }));

  const api = Router();
  api.use(requireApiKey(deps.env.PAYMENT_MS_API_KEY));
  api.use(apiRateLimit({ limitPerMinute: deps.env.PAYMENT_RATE_LIMIT_PER_MINUTE, kv: deps.kv }));
  // Before the general body parser: a usage batch has its own, larger limit.
  api.use(createUsageRouter({ ...deps, meters, metrics: usageMetrics, meterDirectory }));
  api.use(jsonBody(API_BODY_LIMIT));
  api.use(createCheckoutRouter(deps));
  api.use(
    createSubscriptionRouter(
      createSubscriptionStatusReader({
        ...deps,
        maxAgeMs: deps.env.PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS * 1000,
      }),
    ),
  );
  api.use(createPortalRouter(deps));
  api.use(createPurchaseRouter(deps));
  api.use(createEntitlementRouter(deps));
  api.use(createSyncRouter({ ...deps, onSubscriptionStored: checkCurrencies }));
  app.use('/api/v1', api);

  app.use(notFoundHandler());
  app.use(errorHandler({ logger: deps.logger }));
  return app;
}

/** @platform/contract/openapi, loaded on first use. */
function openApi(): typeof import('@platform/contract/openapi') {
  return require('@platform/contract/openapi') as typeof import('@platform/contract/openapi');
}
