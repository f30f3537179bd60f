import { AsyncLocalStorage } from 'node:async_hooks';
import { requestContext } from '@platform/logging';
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

declare module '@platform/logging' {
  interface RequestContext {
    /** The collection of the request's first collectAttempts frame (one per request as a rule). */
    attempts?: RequestAttempts;
  }
}

/** Frames that are not the first of their request (or outside one): an AsyncLocalStorage of their own. */
const nested = new AsyncLocalStorage<RequestAttempts>();

/**
 * Runs `work` collecting the attempts of every upstream walk inside it
 * (runTargets reports them with noteAttempt and noteFailedAttempt), so the
 * route frame can record them without each route passing a collector down.
 * The request's first frame keeps its collection in the request's own store
 * (no AsyncLocalStorage `run` of its own, @platform/logging context.ts): the
 * request's later code sees it too, which only the frame itself reports to.
 */
export function collectAttempts<T>(into: RequestAttempts, work: () => Promise<T>): Promise<T> {
  const store = requestContext.getStore();
  if (store && store.attempts === undefined && nested.getStore() === undefined) {
    store.attempts = into;
    return work();
  }
  return nested.run(into, work);
}

function collecting(): RequestAttempts | undefined {
  return nested.getStore() ?? requestContext.getStore()?.attempts;
}

/** Reports a failed attempt; kept when the provider may bill it and a frame is collecting. */
export function noteFailedAttempt(attempt: BillableAttempt): void {
  if (MAY_BILL.has(attempt.outcome)) collecting()?.billable.push(attempt);
}

/** Called by the fallback loop for every attempt; kept only while the request log is on. */
export function noteAttempt(entry: AttemptNote): void {
  const log = collecting()?.log;
  if (log) appendAttempt(log, entry);
}
