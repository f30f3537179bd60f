import type { ErrorRequestHandler, Response } from 'express';
import type { GateVerdict, ReservationGate } from '../budgets/counter-store';

/** One fixed-window rate counter: its store key (without the store's prefix), limit and window. */
export type RateCounter = ReservationGate['rate'] & {
  /** Set when `max` is the key's own requests_per_minute rule: a refusal names it. */
  keyRule?: { apiKeyId: string };
};

/**
 * A request let through on this instance's cached copy of its key, whose
 * revocation read and rate hit have not been made yet. Whoever takes it owes
 * the check: the budget reservation carries it (`gate`, then `passed` or
 * `refused`), or `runAlone` makes it on its own.
 */
export type PendingAdmission = {
  readonly gate: ReservationGate;
  /** The gate passed in the store: the key is confirmed (last used). */
  passed(): void;
  /**
   * The gate refused: throws the request's answer (429 with Retry-After, or
   * the key checked again from the database: 401). Returns only if that
   * check now passes; the caller then reserves without the gate.
   */
  refused(verdict: GateVerdict): Promise<void>;
  /** The key's revocation read and the rate hit on their own; throws 401, 429 or 503. */
  runAlone(): Promise<void>;
};

const LOCALS_KEY = 'pendingAdmission';

export function setPendingAdmission(res: Response, pending: PendingAdmission): void {
  res.locals[LOCALS_KEY] = pending;
}

/** The request's pending admission, handed over: the caller now owes its check. */
export function takePendingAdmission(res: Response): PendingAdmission | undefined {
  const pending = res.locals[LOCALS_KEY] as PendingAdmission | undefined;
  if (pending) res.locals[LOCALS_KEY] = undefined;
  return pending;
}

/**
 * Error step of the AI routes, before the error is rendered (by `render`, or
 * by the next error handler): a request that failed before its reservation (a
 * bad body, a refused lane) still gets its key and rate checked, and their
 * answer wins: 401 for a revoked key, 429 past the rate, and the hit is
 * counted, as when the check ran before the body. One layer per router
 * stack: every request that walks past it pays for it.
 */
export function admissionBeforeError(render?: ErrorRequestHandler): ErrorRequestHandler {
  return (err, req, res, next) => {
    const pass = (e: unknown) => (render ? render(e, req, res, next) : next(e));
    const pending = takePendingAdmission(res);
    if (!pending) {
      pass(err);
      return;
    }
    pending.runAlone().then(
      () => pass(err),
      (refusal: unknown) => pass(refusal),
    );
  };
}
