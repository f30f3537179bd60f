/** One answered (or refused after the upstream call) AI request, as the ledger keeps it. */
export type LedgerRecord = {
  /** The ledger id: minted by the gateway, unique per request; replaying it never counts twice. */
  requestId: string;
  /**
   * The client's own `x-request-id` (lower-cased, as echoed), for correlation
   * only: never a key. Null or absent when the client sent none.
   */
  clientRequestId?: string | null;
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
  /** Prompt tokens the provider served from its cache (part of promptTokens). */
  cachedTokens: number;
  /**
   * Prompt tokens written to the provider's cache (part of promptTokens),
   * priced at `cache_write`. Absent in records queued by an older version.
   */
  cacheWriteTokens?: number;
  totalTokens: number;
  /** Cost in millionths of `currency`. */
  costMicros: number;
  currency: string;
  /** The tokens are our tokenizer's estimate: the provider reported none. */
  estimated: boolean;
  /** The caller's own provider key paid the provider. */
  byok: boolean;
  /**
   * A stream cut mid-answer and continued on other targets (docs/gateway-ai.md,
   * "Mid-stream continuation"). Set only when true; absent in older records.
   */
  continued?: boolean;
  latencyMs: number;
  /** When the request ended, ms since the epoch. */
  createdAt: number;
};
