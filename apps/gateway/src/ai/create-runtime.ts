import type { Logger, Registry } from '@platform/logging';
import type { GatewayEnv } from '../env';
import { createCircuitBreaker } from './circuit-breaker';
import type { LanesConfig } from './lanes';
import { createAiMetrics } from './metrics';
import { createProviderRegistry, parseBaseUrlOverrides, type ServerProviderKeys } from './providers';
import type { AiRuntime, StoredKeyLookup, TokenBudget, UsageSink } from './runtime';

/** The provider keys the gateway itself holds, from the environment. */
export function serverKeysOf(env: GatewayEnv): ServerProviderKeys {
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
function warnAboutMissingKeys(config: LanesConfig, keys: ServerProviderKeys, logger: Logger): void {
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

export type CreateAiRuntimeOptions = {
  env: GatewayEnv;
  logger: Logger;
  /** The lanes config, loaded and validated once at start. */
  lanes: LanesConfig;
  /** The app's /metrics registry; the upstream metrics are added to it. */
  registry: Registry;
  storedKeys: StoredKeyLookup;
  usage: UsageSink;
  budget: TokenBudget;
};

/** Everything the AI handlers share: providers, timeouts, metrics, usage and budget. */
export function createAiRuntime(opts: CreateAiRuntimeOptions): AiRuntime {
  const { env, logger, lanes } = opts;
  const serverKeys = serverKeysOf(env);
  warnAboutMissingKeys(lanes, serverKeys, logger);
  return {
    config: lanes,
    allowedLanes: new Set(env.AI_ALLOWED_LANES),
    providers: createProviderRegistry({
      config: lanes,
      serverKeys,
      baseUrlOverrides: parseBaseUrlOverrides(env.AI_PROVIDER_BASE_URLS),
    }),
    metrics: createAiMetrics(opts.registry),
    logger,
    upstreamTimeoutMs: env.AI_UPSTREAM_TIMEOUT_MS,
    requestDeadlineMs: env.AI_REQUEST_DEADLINE_MS,
    breaker: createCircuitBreaker({ cooldownMs: env.AI_CIRCUIT_COOLDOWN_MS, registry: opts.registry }),
    idleTimeoutMs: env.AI_STREAM_IDLE_TIMEOUT_MS,
    keepAliveMs: env.AI_STREAM_KEEPALIVE_MS,
    storedKeys: opts.storedKeys,
    usage: opts.usage,
    budget: opts.budget,
  };
}
