/** One upstream attempt as the request log keeps it (JSON in `request_log.attempts`). */
export type LoggedAttempt = {
  /** `provider/model`. */
  target: string;
  /** ai/providers/upstream-errors.ts `AttemptOutcome`: success, rate_limited, timeout, ... */
  outcome: string;
  status: number | null;
  /** 0 for the first try on a target, 1 for its retry. */
  retry: number;
  /** Milliseconds from the start of the request until the attempt started. */
  start_ms: number;
  /** Until the provider started answering (a stream: its first content) or failed. */
  duration_ms: number;
};

/** The attempts of one request, collected while it runs. */
export type AttemptLog = { startedAt: number; attempts: LoggedAttempt[] };

/** What the fallback loop reports of one attempt. */
export type AttemptNote = {
  target: { provider: string; model: string };
  outcome: string;
  status: number | undefined;
  retry: number;
  startedAt: number;
  durationMs: number;
};

/** Adds an attempt to a request's log (ai/request-attempts.ts collects them while the request runs). */
export function appendAttempt(log: AttemptLog, entry: AttemptNote): void {
  log.attempts.push({
    target: `${entry.target.provider}/${entry.target.model}`,
    outcome: entry.outcome,
    status: entry.status ?? null,
    retry: entry.retry,
    start_ms: Math.max(0, entry.startedAt - log.startedAt),
    duration_ms: entry.durationMs,
  });
}

/** Time to first token of a stream: the end of its answering attempt, from the request's start. */
export function firstTokenMs(log: AttemptLog, endpoint: string): number | null {
  if (!endpoint.startsWith('stream') && !endpoint.endsWith('stream')) return null;
  const answered = log.attempts.find((a) => a.outcome === 'success');
  return answered ? answered.start_ms + answered.duration_ms : null;
}
