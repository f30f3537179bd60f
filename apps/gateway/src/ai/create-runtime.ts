import type { KeyValueStore } from '@platform/db';
import type { Logger, Registry } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { Budgets } from '../budgets/budgets';
import type { GatewayEnv } from '../env';
import type { RequestLog } from '../observability/request-log';
import type { UsageLedger } from '../usage/ledger';
import { createCircuitBreaker } from './circuit-breaker';
import { laneAdvice } from './config/lane-advice';
import type { LanesConfig } from './config/lanes';
import { createAiMetrics } from './metrics';
import { createPrefillMemory } from './prefill-memory';
import { createProviderCatalog, type ProviderCatalog } from './providers/catalog';
import { createProviderRegistry, parseBaseUrlOverrides, type ServerProviderKeys } from './providers/registry';
import { budgetRequestOf } from './reserve';
import type { AiRuntime, StoredKeyLookup } from './runtime';

/** The provider keys the gateway itself holds, from the environment. */
export function serverKeysOf(env: GatewayEnv, catalog: ProviderCatalog): ServerProviderKeys {
  const keys: Record<string, string> = {};
  for (const provider of catalog.names) {
    const entry = catalog.get(provider);
    if (!entry) continue;
    // Built-in keys are named fields of the env schema; a configured provider's is any *_API_KEY.
    const key = entry.builtIn
      ? (env as Record<string, unknown>)[entry.keyEnv]
      : env.PROVIDER_API_KEYS?.[entry.keyEnv];
    if (typeof key === 'string' && key) keys[provider] = key;
  }
  return keys;
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
  clock: Clock;
  /** The app's /metrics registry; the upstream metrics are added to it. */
  registry: Registry;
  storedKeys: StoredKeyLookup;
  ledger: UsageLedger;
  /** Keeps failed attempts the provider may bill (AiRuntime.recordAttempts). */
  recordAttempts?: AiRuntime['recordAttempts'];
  budgets: Budgets;
  /** The request log; absent: off. */
  requestLog?: RequestLog | null;
  /** Where learned capabilities are shared across instances (Redis); absent: this process only. */
  kv?: Pick<KeyValueStore, 'get' | 'set'> | null;
  /** Paid lanes' check; absent: every lane is open (no billing configured). */
  laneAccess?: (userId: string, lane: string | null) => Promise<void>;
};

/** Everything the AI handlers share: providers, timeouts, metrics, usage and budget. */
export function createAiRuntime(opts: CreateAiRuntimeOptions): AiRuntime {
  const { env, logger, lanes } = opts;
  const catalog = createProviderCatalog(lanes.providers);
  const serverKeys = serverKeysOf(env, catalog);
  warnAboutMissingKeys(lanes, serverKeys, logger);
  for (const advice of laneAdvice(lanes)) logger.warn({ advice }, 'lanes config: first-token limit advice');
  const laneAccess = opts.laneAccess ?? (async () => {});
  const pricing = { prices: lanes.prices, completionAllowance: env.AI_BUDGET_COMPLETION_ALLOWANCE };
  return {
    config: lanes,
    clock: opts.clock,
    catalog,
    allowedLanes: new Set(env.AI_ALLOWED_LANES),
    providers: createProviderRegistry({
      catalog,
      configuredBaseUrls: Object.fromEntries(
        Object.entries(lanes.providers).map(([name, entry]) => [name, entry?.base_url]),
      ),
      serverKeys,
      baseUrlOverrides: parseBaseUrlOverrides(env.AI_PROVIDER_BASE_URLS),
    }),
    metrics: createAiMetrics(opts.registry),
    logger,
    upstreamTimeoutMs: env.AI_UPSTREAM_TIMEOUT_MS,
    requestDeadlineMs: env.AI_REQUEST_DEADLINE_MS,
    breaker: createCircuitBreaker({
      cooldownMs: env.AI_CIRCUIT_COOLDOWN_MS,
      clock: opts.clock,
      registry: opts.registry,
    }),
    idleTimeoutMs: env.AI_STREAM_IDLE_TIMEOUT_MS,
    keepAliveMs: env.AI_STREAM_KEEPALIVE_MS,
    storedKeys: opts.storedKeys,
    ledger: opts.ledger,
    ...(opts.recordAttempts ? { recordAttempts: opts.recordAttempts } : {}),
    laneAccess,
    admission: {
      budgets: opts.budgets,
      laneAccess,
      storedKeys: opts.storedKeys,
      budgetRequestOf: (caller, request, at) => budgetRequestOf(pricing, caller, request, at),
    },
    budgets: opts.budgets,
    prices: lanes.prices,
    currency: env.AI_COST_CURRENCY,
    completionAllowance: env.AI_BUDGET_COMPLETION_ALLOWANCE,
    requestLog: opts.requestLog ?? null,
    prefillMemory: createPrefillMemory({ kv: opts.kv ?? null, logger }),
  };
}
