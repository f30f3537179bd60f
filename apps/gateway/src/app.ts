import { buildGatewayOpenApi } from '@platform/contract';
import { errorHandler, notFoundHandler } from '@platform/errors';
import { createServiceApp, healthRoutes, jsonBody } from '@platform/service-kit';
import type { Express } from 'express';
import { createChatRouter } from './ai/chat-routes';
import { createMediaRouter } from './ai/media-routes';
import { apiKeyRoutes } from './api-keys/routes';
import { authenticate, requireApiKey } from './auth/api-key-auth';
import { authRoutes } from './auth/routes';
import { type GatewayDeps, SERVICE_NAME } from './deps';
import { corsPolicy } from './http/cors';
import { requireTrustedOrigin } from './http/csrf';
import { createProviderKeyRouter } from './provider-keys/routes';
import { requireAiLimits } from './rate-limit/limits';
import { createUsageRouter } from './usage/routes';
import { userRoutes } from './users/routes';

export type { GatewayDeps } from './deps';
export { SERVICE_NAME } from './deps';

/**
 * Large enough that the chat rules (8 MiB of content, 128 messages) give the
 * answer, with room for JSON escaping and the envelope; beyond it -> 413.
 */
export const AI_BODY_LIMIT = '10mb';

/**
 * Mounts the gateway's routes on the deps main.ts (or a test) built. Order:
 * request id, metrics, access log, helmet, CORS; public routes; then /api/v1.
 */
export function createApp(deps: GatewayDeps): Express {
  const { env, logger, kv, prisma } = deps;
  const { app } = createServiceApp({
    service: SERVICE_NAME,
    logger,
    trustProxyHops: env.TRUST_PROXY_HOPS,
    metrics: deps.metrics,
  });
  app.use(corsPolicy(deps));

  app.use(healthRoutes(SERVICE_NAME, () => buildGatewayOpenApi({ serverUrl: env.GATEWAY_PUBLIC_URL })));
  app.get('/metrics', deps.metrics.handler);

  // Key check and limits run before the body is parsed, so a refused caller
  // cannot make us read 10 MB.
  const aiGuards = [
    requireApiKey(deps),
    requireAiLimits({ kv, perMinute: env.AI_RATE_LIMIT_PER_MINUTE, budget: deps.ai.budget }),
    jsonBody(AI_BODY_LIMIT),
  ];
  const sessionOrKey = authenticate(deps, { allow: ['session', 'api_key'] });

  app.use('/api/v1', authRoutes(deps, deps.mailer));
  app.use('/api/v1', apiKeyRoutes(deps));
  app.use('/api/v1', userRoutes(deps));
  app.use('/api/v1/ai', createChatRouter(deps.ai, aiGuards), createMediaRouter(deps.ai, aiGuards));
  app.use(
    '/api/v1/keys',
    createProviderKeyRouter({
      service: deps.providerKeys,
      auth: sessionOrKey,
      csrf: requireTrustedOrigin(deps),
    }),
  );
  app.use('/api/v1/usage', createUsageRouter({ prisma, auth: sessionOrKey }));

  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));
  return app;
}
