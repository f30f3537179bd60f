import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { McpAccounting } from './accounting';
import type { ServerBreaker } from './breaker';
import type { McpConfig, McpServerConfig } from './config';
import type { McpMetrics } from './metrics';
import type { PolicySet } from './policy';
import type { FetchLike } from './ssrf';

/** What the MCP gateway's sessions share: the servers, governance, accounting, breaker, metrics. */
export type McpRuntime = {
  config: McpConfig;
  /** The servers offered to this user's keys (before the key's policy): the operator's and the user's own. */
  servers(userId: string): Promise<McpServerConfig[]>;
  /** The fetch for a server's requests: the SSRF guard for user-registered servers, else the default. */
  fetchFor(server: McpServerConfig): FetchLike | undefined;
  /** The policies of a session's key and project; read on every list and call, so a change applies to open sessions. */
  policiesOf(owner: SessionOwner): Promise<PolicySet>;
  /**
   * Counts one call against a per-minute limit of `subject`; returns the
   * milliseconds until the window resets when over the limit, else null.
   */
  hit(subject: string, perMinute: number): Promise<number | null>;
  breaker: ServerBreaker;
  accounting: McpAccounting;
  metrics: McpMetrics;
  logger: Logger;
  clock: Clock;
};

/** Who a client session belongs to: fixed at initialize, checked on every later request. */
export type SessionOwner = { userId: string; apiKeyId: string; projectId: string };
