import { jsonBody } from '@platform/errors';
import type { Registry } from '@platform/logging';
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { authenticate, requireApiKey } from '../auth/api-key-auth';
import { requireTrustedOrigin } from '../http/csrf';
import { parseMasterKeys } from '../provider-keys/crypto';
import { createProviderKeyRouter } from '../provider-keys/routes';
import { createProviderKeyService } from '../provider-keys/service';
import { createTokenBudget, requireAiLimits } from '../rate-limit/limits';
import { createUsageRecorder } from '../usage/recorder';
import { createUsageRouter } from '../usage/routes';
import { createChatRouter } from './chat-routes';
import { type LanesConfig, loadLanesConfig } from './lanes';
import { createMediaRouter } from './media-routes';
import { createAiMetrics } from './metrics';
import { createProviderRegistry, parseBaseUrlOverrides, type ServerProviderKeys } from './providers';
import type { AiRuntime } from './runtime';

/**
 * Large enough that the chat rules (8 MiB of content, 128 messages) give the
 * answer, with room for JSON escaping and the envelope; beyond it -> 413.
 */
export const AI_BODY_LIMIT = '10mb';

/** The provider keys the gateway itself holds, from the environment. */
export function serverKeysOf(env: GatewayDeps['env']): ServerProviderKeys {
  return {
    openrouter: env.OPENROUTER_API_KEY,
    groq: env.GROQ_API_KEY,
    cerebras: env.CEREBRAS_API_KEY,
    google: env.GOOGLE_API_KEY,
    openai: env.OPENAI_API_KEY,
    elevenlabs: env.ELEVENLABS_API_KEY,
  };
}

/** Targets whose provider has no server key only work for callers with a stored key; say so once. */
function warnAboutMissingKeys(
  config: LanesConfig,
  keys: ServerProviderKeys,
  logger: GatewayDeps['logger'],
): void {
  const targets = [
    ...Object.values(config.lanes).flatMap((l) => l.targets),
    ...Object.values(config.media).flat(),
  ];
  const missing = [...new Set(targets.map((t) => t.provider))].filter((p) => !keys[p]);
  if (missing.length > 0) {
    logger.warn(
      { providers: missing },
      'no server key for these providers: their targets are skipped unless the caller stored a key',
    );
  }
}

/**
 * Builds the AI part of the API, mounted at /api/v1: `/ai/*` (chat, stream,
 * media), `/keys` (bring your own key) and `/usage`. Reads and validates the
 * lanes config and the master keys, so a bad config throws here and the
 * service does not start.
 */
export function createAiApi(
  deps: GatewayDeps,
  opts: { registry: Registry },
): { router: Router; runtime: AiRuntime } {
  const { env, logger, prisma, kv } = deps;
  const config = loadLanesConfig(env.AI_LANES_CONFIG, env.AI_ALLOWED_LANES);
  const masterKeys = env.PROVIDER_KEYS_MASTER_KEYS ? parseMasterKeys(env.PROVIDER_KEYS_MASTER_KEYS) : null;
  if (!masterKeys) logger.warn('PROVIDER_KEYS_MASTER_KEYS unset: stored provider keys are disabled');
  warnAboutMissingKeys(config, serverKeysOf(env), logger);
  const keys = createProviderKeyService({ prisma, kv, logger, masterKeys });
  const budget = createTokenBudget({ kv, dailyTokens: env.AI_DAILY_TOKEN_BUDGET, logger });
  const runtime: AiRuntime = {
    config,
    allowedLanes: new Set(env.AI_ALLOWED_LANES),
    providers: createProviderRegistry({
      config,
      serverKeys: serverKeysOf(env),
      baseUrlOverrides: parseBaseUrlOverrides(env.AI_PROVIDER_BASE_URLS),
    }),
    metrics: createAiMetrics(opts.registry),
    logger,
    upstreamTimeoutMs: env.AI_UPSTREAM_TIMEOUT_MS,
    idleTimeoutMs: env.AI_STREAM_IDLE_TIMEOUT_MS,
    keepAliveMs: env.AI_STREAM_KEEPALIVE_MS,
    storedKeys: keys.lookup,
    usage: deps.usage ?? createUsageRecorder({ prisma, logger }),
    budget,
  };

  // Key check and limits run before the body is parsed, so a refused caller
  // cannot make us read 10 MB.
  const aiGuards = [
    requireApiKey(deps),
    requireAiLimits({ kv, perMinute: env.AI_RATE_LIMIT_PER_MINUTE, budget }),
    jsonBody(AI_BODY_LIMIT),
  ];
  const sessionOrKey = authenticate(deps, { allow: ['session', 'api_key'] });

  const router = Router();
  router.use('/ai', createChatRouter(runtime, aiGuards), createMediaRouter(runtime, aiGuards));
  router.use(
    '/keys',
    createProviderKeyRouter({ service: keys, auth: sessionOrKey, csrf: requireTrustedOrigin(deps) }),
  );
  router.use('/usage', createUsageRouter({ prisma, auth: sessionOrKey, budget }));
  return { router, runtime };
}
