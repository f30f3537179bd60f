/** One load run, serialisable so it can be sent to the load-generator child over IPC. */
export type LoadSpec = {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Replace `x-api-key` with a fresh random key of this prefix on every request (cache-miss auth path). */
  randomApiKeyPrefix?: string;
  /**
   * A random X-Forwarded-For on every request, as from many clients: the
   * per-address guard against key guessing (60 bad keys a minute) never trips.
   */
  randomClientAddress?: boolean;
  connections: number;
  warmupSec: number;
  durationSec: number;
  /** Per-request timeout; a timeout counts as an error. */
  timeoutSec: number;
};

/** Latency percentiles in milliseconds, computed from every response of the measured window. */
export type LatencySummary = { p50: number; p90: number; p99: number; max: number; mean: number };

/** What one load run observed (the warm-up is counted separately and not in the latencies). */
export type LoadResult = {
  /** Responses received in the measured window. */
  requests: number;
  durationSec: number;
  requestsPerSec: number;
  latencyMs: LatencySummary;
  /** Response count per HTTP status, measured window. */
  statuses: Record<string, number>;
  non2xx: number;
  /** Connection errors, including timeouts. */
  errors: number;
  timeouts: number;
  /** Responses during the warm-up, with their statuses (checked like the measured ones). */
  warmup: { requests: number; statuses: Record<string, number>; errors: number };
};

/** Messages from the load-generator child to the runner. */
export type WorkerMessage =
  | { type: 'measure-start' }
  | { type: 'result'; result: LoadResult }
  | { type: 'failed'; message: string };
