import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { AdmissionPorts } from '../admission/admit';
import type { Budgets } from '../budgets/budgets';
import type { RequestLog } from '../observability/request-log';
import type { UsageLedger } from '../usage/ledger';
import type { PriceTable } from '../usage/pricing';
import type { UsageAttemptRow } from '../usage/repo';
import type { CircuitBreaker } from './circuit-breaker';
import type { LanesConfig } from './config/lanes';
import type { AiMetrics } from './metrics';
import type { PrefillMemory } from './prefill-memory';
import type { ProviderCatalog } from './providers/catalog';
import type { ProviderRegistry } from './providers/registry';
import type { AccountedRequest } from './reserve';

/** The caller's stored provider keys (bring your own key), plaintext, in memory only. */
export type StoredKeys = Readonly<Record<string, string | undefined>>;

/** Looks up a user's stored keys; cached by the implementation, so cheap per request. */
export type StoredKeyLookup = (userId: string) => Promise<StoredKeys>;

/** Everything the AI handlers need, built once per app. */
export type AiRuntime = {
  config: LanesConfig;
  /** The composition root's clock: deadlines, latencies, cooldowns. */
  clock: Clock;
  allowedLanes: ReadonlySet<string>;
  /** Every provider: the built-in ones and those the lanes config adds. */
  catalog: ProviderCatalog;
  providers: ProviderRegistry;
  metrics: AiMetrics;
  logger: Logger;
  /** Until the provider starts answering (AI_UPSTREAM_TIMEOUT_MS). */
  upstreamTimeoutMs: number;
  /** Whole fallback chain of one request (AI_REQUEST_DEADLINE_MS). */
  requestDeadlineMs: number;
  /** Targets cooling down after a failure (AI_CIRCUIT_COOLDOWN_MS). */
  breaker: CircuitBreaker;
  /** Longest silence between stream chunks (AI_STREAM_IDLE_TIMEOUT_MS). */
  idleTimeoutMs: number;
  /** Interval of SSE keep-alive comments. */
  keepAliveMs: number;
  storedKeys: StoredKeyLookup;
  /** Where each request's record goes, durably, before its last byte. */
  ledger: UsageLedger;
  /** Keeps failed attempts the provider may bill (usage_attempts), for an operator; never charged. */
  recordAttempts?: (rows: UsageAttemptRow[]) => Promise<void>;
  /**
   * Paid lanes: resolves when the caller may use the lane (null: a media call
   * without one), throws 402/503 otherwise (billing/billing.ts). Runs before
   * the budget reservation and the provider call.
   */
  laneAccess: (userId: string, lane: string | null) => Promise<void>;
  /** What admission uses (admission/admit.ts): budgets, paid lanes, stored keys, what a request reserves. */
  admission: AdmissionPorts<AccountedRequest, StoredKeys>;
  /** Token and cost budgets: reserve before the upstream call, settle after. */
  budgets: Budgets;
  /** `<provider>/<model>` -> price (lanes config `prices`). */
  prices: PriceTable;
  /** ISO 4217 code of every cost (AI_COST_CURRENCY). */
  currency: string;
  /** Where each request's attempts and timings go (observability/request-log.ts); null: off. */
  requestLog: RequestLog | null;
  /** Completion tokens reserved for a chat request without max_tokens (AI_BUDGET_COMPLETION_ALLOWANCE). */
  completionAllowance: number;
  /** Targets learned to refuse an assistant prefill, in this process and the cluster (prefill-memory.ts). */
  prefillMemory: PrefillMemory;
};
