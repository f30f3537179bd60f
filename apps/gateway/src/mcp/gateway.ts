import type { KeyValueStore } from '@platform/db';
import type { Logger, Registry } from '@platform/logging';
import { countHit } from '@platform/service-kit';
import type { Budgets } from '../budgets/budgets';
import type { Clock } from '../clock';
import type { UsageLedger } from '../usage/ledger';
import { createMcpAccounting } from './accounting';
import { createServerBreaker } from './breaker';
import type { McpConfig } from './config';
import { createMcpMetrics } from './metrics';
import type { McpPolicy } from './policy';
import type { McpRuntime } from './runtime';
import { createSessionStore, type SessionStore } from './sessions';

export type McpGateway = {
  runtime: McpRuntime;
  sessions: SessionStore;
  /** Ends every client session and its upstream sessions (shutdown). */
  close(): Promise<void>;
};

export type McpGatewayOptions = {
  config: McpConfig;
  kv: KeyValueStore;
  ledger: UsageLedger;
  budgets: Budgets;
  currency: string;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  /** The MCP policy of an API key (mcp/policy-repo.ts). */
  policyOf: (apiKeyId: string) => Promise<McpPolicy>;
};

/** The MCP gateway of one instance: the servers of the MCP config, its sessions, governance and records. */
export function createMcpGateway(opts: McpGatewayOptions): McpGateway {
  const { config, clock, logger } = opts;
  const runtime: McpRuntime = {
    config,
    servers: async () => config.servers,
    policyOf: opts.policyOf,
    async hit(subject, perMinute) {
      const rate = await countHit(opts.kv, { name: 'mcp', max: perMinute, windowMs: 60_000 }, subject);
      return rate.total > perMinute ? rate.resetMs : null;
    },
    breaker: createServerBreaker({
      failures: config.breaker.failures,
      cooldownMs: config.breaker.cooldown_ms,
      clock,
    }),
    accounting: createMcpAccounting({ ...opts }),
    metrics: createMcpMetrics(opts.registry),
    logger: logger.child({ component: 'mcp' }),
    clock,
  };
  const sessions = createSessionStore(runtime);
  return { runtime, sessions, close: () => sessions.close() };
}
