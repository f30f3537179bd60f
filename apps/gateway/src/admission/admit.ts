import { isAppError } from '@platform/errors';
import { traced } from '@platform/service-kit';
import type { Response } from 'express';
import { type BudgetRequest, type Budgets, GateRefusedError, type Reservation } from '../budgets/budgets';
import type { RuleTarget } from '../key-rules/rules';
import { type Caller, callerOf } from './caller';
import { applyKeyTargetRules, type TargetedRequest } from './key-targets';
import { type PendingAdmission, takePendingAdmission } from './pending';

/** What an AI request shows admission: where it goes, and whether it is a media request. */
export type AdmissionRequest<T extends RuleTarget = RuleTarget> = TargetedRequest<T> & { media?: unknown };

/**
 * What admission uses besides the request, built once per app. `R` is the
 * route's request; `K` the caller's stored provider keys, fetched alongside
 * the reservation (admission never reads them).
 */
export type AdmissionPorts<R, K> = {
  budgets: Pick<Budgets, 'reserve'>;
  /** Paid lanes: resolves when the caller may use the lane (null: a media call), throws 402/503. */
  laneAccess: (userId: string, lane: string | null) => Promise<void>;
  storedKeys: (userId: string) => Promise<K>;
  /** What `request` reserves, once the key's rules have narrowed its targets. */
  budgetRequestOf: (caller: Caller, request: R, at: number) => BudgetRequest;
};

/** A request let in: who calls, its stored keys, what it reserved and the reservation. */
export type Admitted<K> = {
  caller: Caller;
  storedKeys: K;
  budgetRequest: BudgetRequest;
  reservation: Reservation;
};

/**
 * The one admission step of every AI request that spends, after the route's
 * guards (createAdmission: key, rate) have let it in: the key's lane and
 * model rules (403), paid lanes (402), then the budget reservation (429),
 * which carries the key check and rate hit a cached key still owes (one
 * store round trip). Returns the admitted request, or throws the refusal.
 * Nothing has been reserved when it throws.
 */
export async function admit<R extends AdmissionRequest, K>(
  ports: AdmissionPorts<R, K>,
  res: Response,
  request: R,
  at: number,
): Promise<Admitted<K>> {
  const caller = callerOf(res);
  applyKeyTargetRules(caller.keyRules, request);
  // A media request falls under the media section's billing, whatever lane it names.
  await ports.laneAccess(caller.userId, request.media ? null : request.lane);
  const budgetRequest = ports.budgetRequestOf(caller, request, at);
  const [storedKeys, reservation] = await Promise.all([
    ports.storedKeys(caller.userId),
    traced('gateway.budget.reserve', () =>
      reserveAdmitted(ports.budgets, takePendingAdmission(res), budgetRequest),
    ),
  ]);
  return { caller, storedKeys, budgetRequest, reservation };
}

/**
 * Admission of a request that reserves nothing (Anthropic's count_tokens,
 * free): the key check and rate hit a cached key still owes, on their own.
 */
export async function admitUnreserved(res: Response): Promise<Caller> {
  await takePendingAdmission(res)?.runAlone();
  return callerOf(res);
}

/**
 * The budget reservation, carrying the key check and rate hit the request
 * still owes when its key was let through from this instance's cache
 * (pending.ts): one store round trip for both.
 */
async function reserveAdmitted(
  budgets: Pick<Budgets, 'reserve'>,
  pending: PendingAdmission | undefined,
  request: BudgetRequest,
): Promise<Reservation> {
  if (!pending) return budgets.reserve(request);
  let reservation: Reservation;
  try {
    reservation = await budgets.reserve(request, pending.gate);
  } catch (err) {
    if (!(err instanceof GateRefusedError)) {
      // A budget's 429 comes after the gate passed: the key is good.
      if (isAppError(err) && err.code === 'rate_limited') pending.passed();
      throw err;
    }
    // Throws the answer (401, 429); returns only if the key checks out after all.
    await pending.refused(err.verdict);
    return budgets.reserve(request);
  }
  pending.passed();
  return reservation;
}
