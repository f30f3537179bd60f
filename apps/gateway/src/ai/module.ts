import { jsonBody } from '@platform/errors';
import type { Registry } from '@platform/logging';
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireApiKey } from '../auth/api-key-auth';
import { createChatRouter } from './chat-routes';
import { loadLanesConfig } from './lanes';
import { createAiMetrics } from './metrics';
import { createProviderRegistry, parseBaseUrlOverrides, type ServerProviderKeys } from './providers';
import type { AiRuntime, StoredKeyLookup, TokenBudget, UsageSink } from './runtime';

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

// Stored keys, usage records and limits come with the next change.
const noStoredKeys: StoredKeyLookup = async () => ({});
const noUsage: UsageSink = { record: () => undefined };
const noBudget: TokenBudget = { assertAvailable: async () => undefined, consume: () => undefined };

/**
 * Builds the AI part of the API, mounted at /api/v1: `/ai/chat/*`. Reads and
 * validates the lanes config, so a bad config throws here and the service
 * does not start.
 */
export function createAiApi(
  deps: GatewayDeps,
  opts: { registry: Registry },
): { router: Router; runtime: AiRuntime } {
  const { env, logger } = deps;
  const config = loadLanesConfig(env.AI_LANES_CONFIG, env.AI_ALLOWED_LANES);
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
    storedKeys: noStoredKeys,
    usage: noUsage,
    budget: noBudget,
  };

  // The key check runs before the body is parsed, so a refused caller cannot make us read 10 MB.
  const aiGuards = [requireApiKey(deps), jsonBody(AI_BODY_LIMIT)];
  const router = Router();
  router.use('/ai', createChatRouter(runtime, aiGuards));
  return { router, runtime };
}
