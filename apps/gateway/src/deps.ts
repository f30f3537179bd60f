import type { KeyValueStore } from '@platform/db';
import { createHttpMetrics, type HttpMetrics, type Logger } from '@platform/logging';
import { createAiRuntime } from './ai/create-runtime';
import type { LanesConfig } from './ai/lanes';
import type { AiRuntime } from './ai/runtime';
import { createApiKeyVerifier } from './api-keys/verifier';
import type { AuthDeps } from './auth/deps';
import { createKeyGuessingGuard } from './auth/key-guessing';
import { type Clock, systemClock } from './auth/types';
import type { GatewayEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';
import { createMailer, type Mailer } from './mail';
import { parseMasterKeys } from './provider-keys/crypto';
import type { ProviderKeyDeps } from './provider-keys/deps';
import { createStoredKeyCache } from './provider-keys/stored-key-cache';
import { createTokenBudget } from './rate-limit/token-budget';
import { createUsageRowWriter, type UsageRowWriter } from './usage/usage-row-writer';

export const SERVICE_NAME = 'gateway';

/** What main.ts reads and opens before the app is wired: configuration, logger, the two stores. */
export type GatewayBase = {
  env: GatewayEnv;
  /** The lanes config, read and validated once at start (loadLanesConfig), before anything is opened. */
  lanes: LanesConfig;
  logger: Logger;
  prisma: PrismaClient;
  kv: KeyValueStore;
};

/** Everything createApp mounts routes on; built once by buildGatewayDeps. */
export type GatewayDeps = AuthDeps &
  ProviderKeyDeps & {
    lanes: LanesConfig;
    /** Sign-in mail: SMTP, or the log mailer outside production. */
    mailer: Mailer;
    /** The /metrics registry; the AI upstream metrics are registered on it. */
    metrics: HttpMetrics;
    /** What the AI handlers share (lanes, providers, usage, budget). */
    ai: AiRuntime;
    /** Batched writer of the usage rows (tokens per AI request). */
    usageRows: UsageRowWriter;
  };

/** Replacements for tests and benchmarks; main.ts passes none. */
export type GatewayDepsOverrides = {
  clock?: Clock;
  mailer?: Mailer;
  usageRows?: UsageRowWriter;
};

/**
 * The gateway's wiring, used by main.ts and by every test harness, so both run
 * the same graph. Parses the master keys: a bad one throws here, before the
 * app exists.
 */
export function buildGatewayDeps(base: GatewayBase, overrides: GatewayDepsOverrides = {}): GatewayDeps {
  const { env, lanes, logger, prisma, kv } = base;
  const masterKeys = env.PROVIDER_KEYS_MASTER_KEYS ? parseMasterKeys(env.PROVIDER_KEYS_MASTER_KEYS) : null;
  if (!masterKeys) logger.warn('PROVIDER_KEYS_MASTER_KEYS unset: stored provider keys are disabled');
  const clock = overrides.clock ?? systemClock;
  const metrics = createHttpMetrics({ service: SERVICE_NAME });
  const storedKeys = createStoredKeyCache({ prisma, kv, logger, masterKeys });
  const usageRows = overrides.usageRows ?? createUsageRowWriter({ prisma, logger });
  const ai = createAiRuntime({
    env,
    logger,
    lanes,
    registry: metrics.registry,
    storedKeys: storedKeys.lookup,
    usage: usageRows,
    budget: createTokenBudget({ kv, dailyTokens: env.AI_DAILY_TOKEN_BUDGET, logger }),
  });
  return {
    ...base,
    clock,
    apiKeys: createApiKeyVerifier({ prisma, kv, logger, pepper: env.GATEWAY_SECRET, clock }),
    keyGuessing: createKeyGuessingGuard(kv),
    mailer: overrides.mailer ?? createMailer(env, logger),
    metrics,
    ai,
    masterKeys,
    storedKeys,
    usageRows,
  };
}

/**
 * Closes what buildGatewayDeps built, in the order shutdown needs: buffered
 * usage rows and last-used writes go out while the database is still open.
 * The caller closes Prisma and the key-value store afterwards.
 */
export async function closeGatewayDeps(deps: GatewayDeps): Promise<void> {
  await deps.ai.budget.close();
  await deps.usageRows.close();
  await deps.apiKeys.close();
  await deps.storedKeys.close();
  await deps.mailer.close();
}
