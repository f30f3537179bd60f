import type { Logger } from '@platform/logging';
import type { CircuitBreaker } from './circuit-breaker';
import type { LanesConfig, UpstreamProvider } from './lanes';
import type { AiMetrics } from './metrics';
import type { ProviderRegistry } from './providers';

/** The caller's stored provider keys (bring your own key), plaintext, in memory only. */
export type StoredKeys = Partial<Record<UpstreamProvider, string>>;

/** Looks up a user's stored keys; cached by the implementation, so cheap per request. */
export type StoredKeyLookup = (userId: string) => Promise<StoredKeys>;

/** One finished AI request, as the usage recorder stores it. */
export type UsageEvent = {
  requestId: string;
  userId: string;
  apiKeyId: string | null;
  projectId: string;
  endpoint: string;
  lane: string | null;
  provider: string | null;
  model: string | null;
  /** HTTP status returned to the caller (499 when the client went away). */
  status: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  latencyMs: number;
};

/** Where usage goes; `record` must not block (batched writes). */
export type UsageSink = { record(event: UsageEvent): void };

/** The per-user daily token budget (preview limit). */
export type TokenBudget = {
  /** Throws 429 rate_limited with Retry-After when today's budget is spent. */
  assertAvailable(userId: string): Promise<void>;
  /** Adds tokens after a request; never blocks the response. */
  consume(userId: string, tokens: number): void;
  /** Tokens charged today (UTC), the budget, and when the count resets. */
  today(userId: string): Promise<{ day: string; used: number; budget: number; resetsAt: Date }>;
  /** Sends the charges still waiting (at shutdown, before the store closes). */
  close(): Promise<void>;
};

/** Everything the AI handlers need, built once per app. */
export type AiRuntime = {
  config: LanesConfig;
  allowedLanes: ReadonlySet<string>;
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
  usage: UsageSink;
  budget: TokenBudget;
};

/** Who is calling, from the auth context. */
export type Caller = { userId: string; apiKeyId: string | null };
