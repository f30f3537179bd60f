import { errorHandler, notFoundHandler } from '@platform/errors';
import {
  createHealthRouter,
  createServiceApp,
  jsonBody,
  metricsAccess,
  storageReadiness,
} from '@platform/service-kit';
import type { Express } from 'express';
import { createAdmission } from './admission/guards';
import { createChatRouter, createMediaRouter } from './ai/routes';
import { createApiKeyRouter } from './api-keys/routes';
import { createAuditRouter } from './audit/routes';
import { authenticate, requireAuthOf } from './auth/api-key-auth';
import { requireTrustedOrigin } from './auth/csrf';
import { createSessionRouter } from './auth/routes';
import { createBillingRouter } from './billing/routes';
import { createBudgetRouter } from './budgets/routes';
import { createConsoleRouter } from './console/routes';
import { type GatewayDeps, SERVICE_NAME } from './deps';
import { corsPolicy } from './http/cors';
import { createMcpPolicyRouter } from './mcp/policy-routes';
import { createMcpRouter } from './mcp/routes';
import { createMcpServerRouter } from './mcp/server-routes';
import { createProjectSettingsRouter } from './observability/project-settings-routes';
import { createRequestLogRouter } from './observability/request-log-routes';
import { createMessagesRouter } from './openai-compat/messages/routes';
import { createOpenAiCompatRouter } from './openai-compat/routes';
import { createProviderKeyRouter } from './provider-keys/routes';
import { createSignInRouter } from './sign-in/routes';
import { createSsoRouter } from './sso/routes';
import { createTeamRequestLogRouter } from './teams/request-log-routes';
import { createTeamRouter } from './teams/routes';
import { createUsageRouter } from './usage/routes';
import { requireServiceToken } from './usage/service-token';
import { createUserRouter } from './users/routes';

export type { GatewayDeps } from './deps';
export { SERVICE_NAME } from './deps';

/**
 * Large enough that the chat rules (8 MiB of content, 128 messages) give the
 * answer, with room for JSON escaping and the envelope; beyond it -> 413.
 */
export const AI_BODY_LIMIT = '10mb';

/** Largest MCP message a client may send (tool arguments included). */
export const MCP_BODY_LIMIT = '4mb';

/**
 * Mounts the gateway's routes on the deps main.ts (or a test) built. Every
 * router spells its paths in full (`/api/v1/...`, `/v1/...`) and is mounted
 * without a prefix, so grepping a URL finds its handler. Order:
 * request id, metrics, access log, helmet, CORS; the AI routes (/api/v1/ai and
 * the OpenAI-compatible /v1); health and metrics; the rest of /api/v1; the console.
 *
 * Over 80 lines: the one list of every router in mount order, read top to bottom.
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

  // Every AI route is mounted behind one of these (admission/guards.ts); its
  // handler's runAccounted admits it (admission/admit.ts).
  const admission = createAdmission(deps, {
    kv,
    perMinute: env.AI_RATE_LIMIT_PER_MINUTE,
    bodyLimit: AI_BODY_LIMIT,
  });
  const sessionOrKey = authenticate(deps, { allow: ['session', 'api_key'] });

  // The AI routes first (native and OpenAI-compatible): the hot path walks neither
  // the health nor the account routers' route lists.
  // Their errors pass admissionBeforeError on the way to the app's error handler.
  app.use(
    createChatRouter(deps.ai, admission.spend),
    createMediaRouter(deps.ai, admission.spend),
    admission.beforeError(),
  );
  // Anthropic's API (messages, count_tokens, models for Anthropic clients) before the OpenAI
  // router, which answers every other /v1 path.
  app.use(
    createMessagesRouter(deps.ai, {
      guards: admission.spendBearer,
      read: [admission.read],
      logger,
    }),
  );
  // OpenAI's path layout, outside /api/v1; it answers its own errors (OpenAI's shape), 404s included.
  app.use(
    createOpenAiCompatRouter(deps.ai, {
      guards: { chat: admission.spendBearer, read: [admission.read] },
      logger,
      responses: deps.responses,
      mcp: deps.mcp,
    }),
  );

  // The MCP gateway: MCP clients send the key as `Authorization: Bearer` (or x-api-key).
  app.use(createMcpRouter(deps.mcp.sessions, { auth: admission.read, json: jsonBody(MCP_BODY_LIMIT) }));

  // Through the pool's raw SQL (the connections Prisma shares), so a probe loads no Prisma (lazy-prisma.ts).
  const readiness = storageReadiness({ queryDatabase: () => deps.sql.query('SELECT 1'), kv });
  // Without SMTP sign-in links cannot go out, but keys, sessions and AI calls still work.
  const verifySmtp = deps.mailer.verify?.bind(deps.mailer);
  if (verifySmtp) readiness.push({ name: 'smtp', required: false, check: verifySmtp });
  if (deps.billing.readiness) readiness.push(deps.billing.readiness);
  if (deps.ledger.readiness) readiness.push(deps.ledger.readiness);
  app.use(
    createHealthRouter(
      SERVICE_NAME,
      // Loaded when /openapi.json is first asked for: the generator is in no idle worker (issue 46).
      () => openApi().buildGatewayOpenApi({ serverUrl: env.GATEWAY_PUBLIC_URL }),
      readiness,
    ),
  );
  app.get('/metrics', metricsAccess(env.METRICS_TOKEN), deps.metrics.handler);

  app.use(createSignInRouter(deps, deps.mailer));
  app.use(createSsoRouter(deps));
  app.use(createSessionRouter(deps));
  app.use(createApiKeyRouter(deps));
  app.use(createUserRouter(deps));
  app.use(
    createProviderKeyRouter(deps, {
      auth: sessionOrKey,
      csrf: requireTrustedOrigin(deps),
      catalog: deps.ai.catalog,
    }),
  );
  app.use(
    createBillingRouter({
      billing: deps.billing,
      service: requireServiceToken(env.GATEWAY_SERVICE_TOKEN),
      json: jsonBody('16kb'),
    }),
  );
  app.use(createRequestLogRouter({ prisma, auth: sessionOrKey }));
  app.use(
    createProjectSettingsRouter({
      prisma,
      logger,
      capture: deps.projectCapture,
      auth: sessionOrKey,
      csrf: requireTrustedOrigin(deps),
    }),
  );
  app.use(
    createUsageRouter({
      prisma,
      sql: deps.sql,
      auth: sessionOrKey,
      service: requireServiceToken(env.GATEWAY_SERVICE_TOKEN),
      currency: env.AI_COST_CURRENCY,
      clock: deps.clock,
    }),
  );
  app.use(
    createBudgetRouter({
      prisma,
      sql: deps.sql,
      budgets: deps.budgets,
      currency: env.AI_COST_CURRENCY,
      auth: sessionOrKey,
      userOf: (res) => requireAuthOf(res).userId,
      csrf: requireTrustedOrigin(deps),
      logger,
    }),
  );
  app.use(createAuditRouter({ prisma, auth: sessionOrKey }));
  app.use(createTeamRouter(deps));
  app.use(createTeamRequestLogRouter(deps));
  app.use(
    createMcpServerRouter({
      prisma,
      gateway: deps.mcp,
      masterKeys: deps.masterKeys,
      auth: sessionOrKey,
      csrf: requireTrustedOrigin(deps),
    }),
  );
  app.use(
    createMcpPolicyRouter({
      prisma,
      read: sessionOrKey,
      write: [authenticate(deps, { allow: ['session'] }), requireTrustedOrigin(deps)],
      invalidate: deps.mcp.invalidatePolicies,
    }),
  );
  app.use(createConsoleRouter(deps));

  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));
  return app;
}

/** @platform/contract/openapi, loaded on first use. */
function openApi(): typeof import('@platform/contract/openapi') {
  return require('@platform/contract/openapi') as typeof import('@platform/contract/openapi');
}
