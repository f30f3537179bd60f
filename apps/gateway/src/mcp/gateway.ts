import type { KeyValueStore } from '@platform/db';
import type { Logger, Registry } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { countHit } from '@platform/service-kit';
import type { Budgets } from '../budgets/budgets';
import { lruCache } from '../cache/lru';
import type { UsageLedger } from '../usage/ledger';
import { createMcpAccounting } from './accounting';
import { createServerBreaker } from './breaker';
import type { McpConfig, McpServerConfig } from './config';
import { createMcpMetrics } from './metrics';
import type { PolicySet } from './policy';
import type { McpRuntime, SessionOwner } from './runtime';
import { createSessionStore, type SessionStore } from './sessions';
import { guardedFetch } from './ssrf';

export type McpGateway = {
  runtime: McpRuntime;
  sessions: SessionStore;
  /** Forgets this instance's copy of a user's registered servers (after a change). */
  invalidateServers(userId: string): void;
  /** Forgets this instance's cached policies (after a change); other instances follow within POLICY_CACHE_MS. */
  invalidatePolicies(): void;
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
  /** The MCP policies of a session's key and project (mcp/policy-repo.ts). */
  loadPolicies: (owner: SessionOwner) => Promise<PolicySet>;
  /** The servers a user registered, credentials decrypted (mcp/server-repo.ts). */
  loadUserServers: (userId: string) => Promise<McpServerConfig[]>;
};

/** How long an instance trusts its copy of a session's policies: a change elsewhere applies within it. */
export const POLICY_CACHE_MS = 2000;

/** The MCP gateway of one instance: the servers of the MCP config, its sessions, governance and records. */
export function createMcpGateway(opts: McpGatewayOptions): McpGateway {
  const { config, clock, logger } = opts;
  const policies = lruCache<string, { set: PolicySet }>({ max: 10_000, ttlMs: POLICY_CACHE_MS });
  const userServers = lruCache<string, McpServerConfig[]>({ max: 10_000, ttlMs: POLICY_CACHE_MS });
  const guarded = guardedFetch({ allowedHosts: config.user_servers.allowed_hosts });
  const runtime: McpRuntime = {
    config,
    async servers(userId) {
      if (!config.user_servers.enabled) return config.servers;
      let own = userServers.get(userId);
      if (!own) {
        own = await opts.loadUserServers(userId);
        userServers.set(userId, own);
      }
      return own.length === 0 ? config.servers : [...config.servers, ...own];
    },
    fetchFor: (server) => (server.owner ? guarded : undefined),
    async policiesOf(owner) {
      const key = `${owner.apiKeyId}|${owner.projectId}`;
      const hit = policies.get(key);
      if (hit) return hit.set;
      const set = await opts.loadPolicies(owner);
      policies.set(key, { set });
      return set;
    },
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
  return {
    runtime,
    sessions,
    invalidatePolicies: () => policies.clear(),
    invalidateServers: (userId) => userServers.delete(userId),
    close: () => sessions.close(),
  };
}
