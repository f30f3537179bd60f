import { AsyncLocalStorage } from 'node:async_hooks';
import { type AttemptLog, type AttemptNote, appendAttempt } from '../observability/attempt-log';
import type { Target } from './config/lanes';
import type { AttemptOutcome } from './providers/upstream-errors';

/** A failed upstream attempt the provider may bill: the request reached it, no answer came back in time. */
export type BillableAttempt = {
  target: Target;
  byok: boolean;
  outcome: AttemptOutcome;
  status: number | null;
  latencyMs: number;
};

/** Outcomes after which the provider may have generated (and billed) an answer we never got. */
const MAY_BILL: ReadonlySet<AttemptOutcome> = new Set(['timeout']);

/**
 * What the route frame collects from every upstream walk of one request:
 * the billable failed attempts (always), and every attempt for the request
 * log (only while the log is on: `log` absent otherwise).
 */
export type RequestAttempts = { billable: BillableAttempt[]; log: AttemptLog | undefined };

// One store for both collections: one AsyncLocalStorage.run per request, not one per collection.
const current = new AsyncLocalStorage<RequestAttempts>();

/**
 * Runs `work` collecting the attempts of every upstream walk inside it
 * (runTargets reports them with noteAttempt and noteFailedAttempt), so the
 * route frame can record them without each route passing a collector down.
 */
export function collectAttempts<T>(into: RequestAttempts, work: () => Promise<T>): Promise<T> {
  return current.run(into, work);
}

/** Reports a failed attempt; kept when the provider may bill it and a frame is collecting. */
export function noteFailedAttempt(attempt: BillableAttempt): void {
  if (MAY_BILL.has(attempt.outcome)) current.getStore()?.billable.push(attempt);
}

/** Called by the fallback loop for every attempt; kept only while the request log is on. */
export function noteAttempt(entry: AttemptNote): void {
  const log = current.getStore()?.log;
  if (log) appendAttempt(log, entry);
}
