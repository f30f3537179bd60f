import { buildGatewayOpenApi } from '@platform/contract';
import { errorHandler, notFoundHandler } from '@platform/errors';
import { createHealthRouter, createServiceApp, jsonBody, storageReadiness } from '@platform/service-kit';
import type { Express } from 'express';
import { createChatRouter } from './ai/chat-routes';
import { createMediaRouter } from './ai/media-routes';
import { createApiKeyRouter } from './api-keys/routes';
import { authenticate, requireApiKey } from './auth/api-key-auth';
import { createAuthRouter } from './auth/routes';
import { createConsoleRouter } from './console/routes';
import { type GatewayDeps, SERVICE_NAME } from './deps';
import { corsPolicy } from './http/cors';
import { requireTrustedOrigin } from './http/csrf';
import { createOpenAiCompatRouter } from './openai-compat/routes';
import { createProviderKeyRouter } from './provider-keys/routes';
import { aiLimitCheck } from './rate-limit/limits';
import { createUsageRouter } from './usage/routes';
import { createUserRouter } from './users/routes';

export type { GatewayDeps } from './deps';
export { SERVICE_NAME } from './deps';

/**
 * Large enough that the chat rules (8 MiB of content, 128 messages) give the
 * answer, with room for JSON escaping and the envelope; beyond it -> 413.
 */
export const AI_BODY_LIMIT = '10mb';

/**
 * Mounts the gateway's routes on the deps main.ts (or a test) built. Order:
 * request id, metrics, access log, helmet, CORS; the AI routes (/api/v1/ai and
 * the OpenAI-compatible /v1); health and metrics; the rest of /api/v1; the console.
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

  // Key check and limits run before the body is parsed, so a refused caller
  // cannot make us read 10 MB.
  // The limits go out with the key's revocation read: one store round trip (docs/performance.md).
  const aiLimits = aiLimitCheck({ kv, perMinute: env.AI_RATE_LIMIT_PER_MINUTE, budget: deps.ai.budget });
  const aiGuards = [requireApiKey(deps, { alongside: aiLimits }), jsonBody(AI_BODY_LIMIT)];
  // OpenAI's SDKs send the key as `Authorization: Bearer`.
  const bearerKey = requireApiKey(deps, { bearer: true });
  const bearerKeyAndLimits = requireApiKey(deps, { bearer: true, alongside: aiLimits });
  const sessionOrKey = authenticate(deps, { allow: ['session', 'api_key'] });

  // The AI routes first (native and OpenAI-compatible): the hot path walks neither
  // the health nor the account routers' route lists.
  app.use('/api/v1/ai', createChatRouter(deps.ai, aiGuards), createMediaRouter(deps.ai, aiGuards));
  // OpenAI's path layout, outside /api/v1; it answers its own errors (OpenAI's shape), 404s included.
  app.use(
    '/v1',
    createOpenAiCompatRouter(deps.ai, {
      guards: { chat: [bearerKeyAndLimits, jsonBody(AI_BODY_LIMIT)], read: [bearerKey] },
      logger,
    }),
  );

  const readiness = storageReadiness({ queryDatabase: () => prisma.$queryRaw`SELECT 1`, kv });
  // Without SMTP sign-in links cannot go out, but keys, sessions and AI calls still work.
  const verifySmtp = deps.mailer.verify?.bind(deps.mailer);
  if (verifySmtp) readiness.push({ name: 'smtp', required: false, check: verifySmtp });
  app.use(
    createHealthRouter(
      SERVICE_NAME,
      () => buildGatewayOpenApi({ serverUrl: env.GATEWAY_PUBLIC_URL }),
      readiness,
    ),
  );
  app.get('/metrics', deps.metrics.handler);

  app.use('/api/v1', createAuthRouter(deps, deps.mailer));
  app.use('/api/v1', createApiKeyRouter(deps));
  app.use('/api/v1', createUserRouter(deps));
  app.use(
    '/api/v1/keys',
    createProviderKeyRouter(deps, { auth: sessionOrKey, csrf: requireTrustedOrigin(deps) }),
  );
  app.use('/api/v1/usage', createUsageRouter({ prisma, auth: sessionOrKey, budget: deps.ai.budget }));
  app.use(createConsoleRouter(deps));

  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));
  return app;
}
