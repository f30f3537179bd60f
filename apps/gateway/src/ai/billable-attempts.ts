import { AsyncLocalStorage } from 'node:async_hooks';
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

const current = new AsyncLocalStorage<BillableAttempt[]>();

/**
 * Runs `work` collecting the billable failed attempts of every upstream walk
 * inside it (runTargets reports them with noteFailedAttempt), so the route
 * frame can record them beside the request's record without each route
 * passing a collector down.
 */
export function collectBillableAttempts<T>(into: BillableAttempt[], work: () => Promise<T>): Promise<T> {
  return current.run(into, work);
}

/** Reports a failed attempt; kept when the provider may bill it and a frame is collecting. */
export function noteFailedAttempt(attempt: BillableAttempt): void {
  if (MAY_BILL.has(attempt.outcome)) current.getStore()?.push(attempt);
}
