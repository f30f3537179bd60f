import path from 'node:path';
import type { KeyValueStore, RedisKeyValueStore } from '@platform/db';
import { createHttpMetrics, type HttpMetrics, type Logger, type Registry } from '@platform/logging';
import { type Clock, systemClock } from '@platform/service-kit';
import type { LanesConfig } from './ai/config/lanes';
import { createAiRuntime } from './ai/create-runtime';
import type { AiRuntime } from './ai/runtime';
import { startAuditRetention } from './audit/retention';
import { createApiKeyVerifier } from './auth/api-key-verifier';
import type { AuthDeps } from './auth/deps';
import { createKeyGuessingGuard } from './auth/key-guessing';
import { prismaSql, type RawSql } from './batching/raw-sql';
import { type Billing, createBilling } from './billing/billing';
import { createCursorStore } from './billing/cursor-repo';
import { type Budgets, createBudgets } from './budgets/budgets';
import type { BudgetCounterStore } from './budgets/counter-store';
import { createMemoryCounterStore } from './budgets/counter-store-memory';
import { createRedisCounterStore } from './budgets/counter-store-redis';
import { listUserBudgets, useInWindow } from './budgets/repo';
import { type BudgetDefault, parseBudgetDefaults } from './budgets/rules';
import type { GatewayEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';
import { createMailer, type Mailer } from './mail';
import { loadMcpConfig } from './mcp/config';
import { createMcpGateway, type McpGateway } from './mcp/gateway';
import { findSessionPolicies } from './mcp/policy-repo';
import { loadUserServers } from './mcp/server-repo';
import { createProjectCapture, type ProjectCapture } from './observability/capture';
import { createRequestLog, startRequestLogRetention } from './observability/request-log';
import { createResponseStore, type ResponseStore } from './openai-compat/responses/store';
import { parseMasterKeys } from './provider-keys/crypto';
import type { ProviderKeyDeps } from './provider-keys/deps';
import { createStoredKeyCache } from './provider-keys/stored-key-cache';
import { readFeed } from './usage/feed-repo';
import type { UsageLedger } from './usage/ledger';
import { withLedgerFallbacks } from './usage/ledger-durable';
import { createPostgresLedger } from './usage/ledger-postgres';
import { createRedisStreamLedger } from './usage/ledger-redis-stream';
import { createLedgerSpool } from './usage/ledger-spool';
import { insertUsageAttempts } from './usage/repo';
import { startUsageRetention } from './usage/retention';

export const SERVICE_NAME = 'gateway';

/** What main.ts reads and opens before the app is wired: configuration, logger, the two stores. */
export type GatewayBase = {
  env: GatewayEnv;
  /** The lanes config, read and validated once at start (loadLanesConfig), before anything is opened. */
  lanes: LanesConfig;
  logger: Logger;
  prisma: PrismaClient;
  /**
   * Raw SQL on Prisma's own pool (`@platform/db`'s Database), for the batched
   * inserts; without it they go through Prisma (batching/raw-sql.ts).
   */
  sql?: RawSql;
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
    /** What the AI handlers share (lanes, providers, ledger, budgets). */
    ai: AiRuntime;
    /** The usage ledger (durable before each answer's last byte). */
    ledger: UsageLedger;
    /** Usage shipping to payment and paid lanes (docs/billing.md). */
    billing: Billing;
    budgets: Budgets;
    /** The MCP gateway (POST /mcp): servers of MCP_CONFIG, client sessions, tool governance. */
    mcp: McpGateway;
    /** Stored responses of /v1/responses; null when RESPONSES_RETENTION_DAYS is 0. */
    responses: ResponseStore | null;
    /** Which projects keep prompts and answers in the request log (cached per owner). */
    projectCapture: ProjectCapture;
    /** Stops the retention jobs. */
    stopRetention: () => void;
  };

/** Replacements for tests and benchmarks; main.ts passes none. */
export type GatewayDepsOverrides = {
  clock?: Clock;
  mailer?: Mailer;
  /** Settings of the Redis stream ledger's consumer (tests shorten the take-over and stall times). */
  ledger?: { claimIdleMs?: number; retryDelayMs?: number; stallMs?: number };
  /** Another ledger (the benchmark's ablation that records nothing). */
  ledgerAdapter?: UsageLedger;
};

/** The server's budget defaults: AI_DAILY_TOKEN_BUDGET plus AI_BUDGET_DEFAULTS (which wins on the same budget). */
export function budgetDefaultsOf(env: GatewayEnv): BudgetDefault[] {
  const listed = parseBudgetDefaults(env.AI_BUDGET_DEFAULTS);
  const daily: BudgetDefault = {
    scope: 'user',
    period: 'daily',
    unit: 'tokens',
    limit: env.AI_DAILY_TOKEN_BUDGET,
  };
  const same = (d: BudgetDefault) => d.scope === 'user' && d.period === 'daily' && d.unit === 'tokens';
  return listed.some(same) ? listed : [daily, ...listed];
}

/**
 * The ledger and budget counters on the key-value store's kind: Redis (a
 * stream drained into Postgres; Lua counters shared by every instance) or
 * memory (direct Postgres writes; counters in this process, one set per
 * store, so that instances sharing a memory store share their counters as
 * they would share Redis).
 */
const memoryCounters = new WeakMap<KeyValueStore, BudgetCounterStore>();

function memoryCountersOf(kv: KeyValueStore, clock: Clock): BudgetCounterStore {
  let store = memoryCounters.get(kv);
  if (!store) {
    store = createMemoryCounterStore(clock, kv);
    memoryCounters.set(kv, store);
  }
  return store;
}

function moneyAdapters(
  base: GatewayBase,
  sql: RawSql,
  overrides: GatewayDepsOverrides,
  clock: Clock,
  registry: Registry,
): { ledger: UsageLedger; counters: BudgetCounterStore } {
  const { kv, prisma, logger } = base;
  const counters = (): BudgetCounterStore =>
    kv.kind === 'redis'
      ? createRedisCounterStore((kv as RedisKeyValueStore).redis, (kv as RedisKeyValueStore).keyPrefix, clock)
      : memoryCountersOf(kv, clock);
  if (overrides.ledgerAdapter) return { ledger: overrides.ledgerAdapter, counters: counters() };
  const durable = (primary: UsageLedger, direct: PrismaClient | null) =>
    withLedgerFallbacks({
      primary,
      prisma: direct,
      spool: createLedgerSpool({
        dir: path.join(base.env.DATA_DIR, 'ledger-spool'),
        maxBytes: base.env.USAGE_LEDGER_SPOOL_MAX_BYTES,
      }),
      replayInto: prisma,
      logger,
      registry,
    });
  if (kv.kind === 'redis') {
    const redisKv = kv as RedisKeyValueStore;
    const ledger = createRedisStreamLedger({
      redis: redisKv.redis,
      prisma,
      sql,
      logger,
      streamKey: `${redisKv.keyPrefix}usage:ledger`,
      claimIdleMs: base.env.USAGE_LEDGER_CLAIM_IDLE_MS,
      registry,
      ...overrides.ledger,
    });
    ledger.start();
    // Redis refusing: Postgres directly; both: the local spool.
    return { ledger: durable(ledger, prisma), counters: counters() };
  }
  // Postgres refusing: the local spool.
  return { ledger: durable(createPostgresLedger(sql), null), counters: counters() };
}

/**
 * The gateway's wiring, used by main.ts and by every test harness, so both run
 * the same graph. Parses the master keys: a bad one throws here, before the
 * app exists.
 *
 * Over 80 lines: the composition root; each statement builds one part, in dependency order.
 */
export function buildGatewayDeps(base: GatewayBase, overrides: GatewayDepsOverrides = {}): GatewayDeps {
  const { env, lanes, logger, prisma, kv } = base;
  const masterKeys = env.PROVIDER_KEYS_MASTER_KEYS ? parseMasterKeys(env.PROVIDER_KEYS_MASTER_KEYS) : null;
  if (!masterKeys) logger.warn('PROVIDER_KEYS_MASTER_KEYS unset: stored provider keys are disabled');
  const clock = overrides.clock ?? systemClock;
  // A chat's queries go through raw SQL on the pool, never Prisma (AuthDeps.sql).
  const sql = base.sql ?? prismaSql(prisma);
  const metrics = createHttpMetrics({ service: SERVICE_NAME });
  const storedKeys = createStoredKeyCache({ sql, kv, logger, masterKeys, clock });
  const { ledger, counters } = moneyAdapters(base, sql, overrides, clock, metrics.registry);
  const budgets = createBudgets({
    store: counters,
    defaults: budgetDefaultsOf(env),
    loadUserRules: (userId) => listUserBudgets(sql, userId),
    windowUse: (userId, id, window) => useInWindow(sql, userId, id, window),
    logger,
    now: clock,
  });
  const retention = startUsageRetention({ sql, logger, clock, retentionDays: env.USAGE_RETENTION_DAYS });
  const auditRetention = startAuditRetention({
    sql,
    logger,
    clock,
    retentionDays: env.AUDIT_RETENTION_DAYS,
  });
  const projectCapture = createProjectCapture({ sql, kv, logger, clock });
  const requestLog =
    env.REQUEST_LOG_RETENTION_DAYS > 0 ? createRequestLog({ sql, logger, capture: projectCapture }) : null;
  const requestLogRetention = requestLog
    ? startRequestLogRetention({ sql, logger, clock, retentionDays: env.REQUEST_LOG_RETENTION_DAYS })
    : null;
  const responses =
    env.RESPONSES_RETENTION_DAYS > 0
      ? createResponseStore({ sql, clock, retentionDays: env.RESPONSES_RETENTION_DAYS })
      : null;
  const stopResponseSweep = responses?.startSweeping(logger);
  const billing = createBilling({
    env,
    lanes,
    logger,
    kv,
    clock,
    registry: metrics.registry,
    feed: (after, limit) => readFeed(sql, { after, limit }),
    cursor: createCursorStore(sql, 'usage'),
  });
  billing.start();
  const ai = createAiRuntime({
    env,
    logger,
    lanes,
    clock,
    registry: metrics.registry,
    storedKeys: storedKeys.lookup,
    ledger,
    recordAttempts: (rows) => insertUsageAttempts(prisma, rows),
    budgets,
    laneAccess: billing.access,
    requestLog,
    kv,
  });
  const mcp = createMcpGateway({
    config: loadMcpConfig(env.MCP_CONFIG),
    kv,
    ledger,
    budgets,
    currency: env.AI_COST_CURRENCY,
    clock,
    logger,
    registry: metrics.registry,
    loadPolicies: (owner) => findSessionPolicies(prisma, owner),
    loadUserServers: (userId) =>
      loadUserServers(prisma, masterKeys, userId, (name, err) =>
        logger.error(
          { server: name, err: String(err) },
          'mcp server credentials unreadable; server left out',
        ),
      ),
  });
  return {
    ...base,
    sql,
    clock,
    apiKeys: createApiKeyVerifier({ sql, kv, logger, pepper: env.GATEWAY_SECRET, clock }),
    keyGuessing: createKeyGuessingGuard(kv),
    mailer: overrides.mailer ?? createMailer(env, logger),
    metrics,
    ai,
    masterKeys,
    storedKeys,
    ledger,
    budgets,
    billing,
    mcp,
    responses,
    projectCapture,
    stopRetention: () => {
      retention.stop();
      auditRetention.stop();
      requestLogRetention?.stop();
      stopResponseSweep?.();
    },
  };
}

/**
 * Closes what buildGatewayDeps built, in the order shutdown needs: the
 * ledger's drain stops (what it has not written stays in the Redis stream
 * for the next start), last-used writes go out while the database is open.
 * The caller closes Prisma and the key-value store afterwards.
 */
export async function closeGatewayDeps(deps: GatewayDeps): Promise<void> {
  deps.stopRetention();
  await deps.mcp.close();
  await deps.billing.close();
  await deps.ai.requestLog?.close();
  await deps.ledger.close();
  await deps.apiKeys.close();
  await deps.storedKeys.close();
  await deps.projectCapture.close();
  await deps.mailer.close();
}
