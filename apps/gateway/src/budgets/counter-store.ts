/**
 * Checks a caller asks the store to make first, in the same atomic step as a
 * reservation. The budgets pass them through without reading them (the
 * caller's admission fills them in): refused if `markerKey` exists, else one
 * hit on the fixed-window counter `rate`, refused past its `max`.
 */
export type ReservationGate = { markerKey: string; rate: { key: string; max: number; windowMs: number } };

/** Why a gate refused: its marker exists (`revoked`), or its rate is spent until `resetMs` from now. */
export type GateVerdict = { refused: 'revoked' } | { refused: 'rate'; resetMs: number };

/**
 * One counter a reservation touches: its limit and what this request needs;
 * `windowStartsAt` (ms) tells a counter missing inside its window because the
 * store lost it (see BudgetCounterStore.reserve) from one not used yet.
 */
export type CounterClaim = {
  key: string;
  limit: number;
  need: number;
  ttlMs: number;
  windowStartsAt: number;
  /** Set the expiry on every reservation, not only when the counter is created (a concurrency counter). */
  renewTtl?: boolean;
};

/** A change to one counter: `by` added (negative gives back); `ttlMs` its expiry if it has none. */
export type CounterDelta = { key: string; by: number; ttlMs: number };

export type ReserveResult =
  /** Reserved `ceil(need * ppm / 1e6)` on every counter. */
  | { ok: true; ppm: number }
  /** Counter `index` is at or over its limit, or has less left than `minPpm` of its need; nothing was reserved. */
  | { ok: false; index: number }
  /** The admission gate refused; nothing was counted on the budget counters. */
  | { ok: false; gate: GateVerdict }
  /**
   * These counters (indices) are missing inside their window, and the store
   * has been keeping counters for less time than that window (it lost them:
   * a Redis restart without AOF, an eviction, a process restart in memory).
   * Nothing was reserved nor counted: rebuild them, then reserve again.
   */
  | { ok: false; rebuild: number[] };

/**
 * Budget counters, atomic across every instance. Two adapters: Redis (one Lua
 * script per call) and memory (single process, same semantics).
 */
export type BudgetCounterStore = {
  /**
   * Refuses if any counter is at or over its limit; otherwise reserves on every
   * counter the same share of its need: all of it, or less when a counter has
   * less left (the smallest `left / need` over the counters, in millionths).
   * A share below `minPpm` (what the prompt alone takes) refuses instead.
   * With a `gate`, its checks come first in the same atomic step (see
   * ReservationGate): the request's key admission and its budgets in one call.
   */
  reserve(claims: readonly CounterClaim[], minPpm: number, gate?: ReservationGate): Promise<ReserveResult>;
  /** Adds `by` (negative to give back) to each counter; sets its expiry if it has none. */
  adjust(deltas: readonly CounterDelta[]): Promise<void>;
  /** Current values (0 when absent). */
  read(keys: readonly string[]): Promise<number[]>;
  /** Sets a counter to `value` (a budget that starts being counted mid-window: its use so far). */
  seed(key: string, value: number, ttlMs: number): Promise<void>;
  /** Sets a counter to `value` unless it exists meanwhile (a lost counter rebuilt from the daily sums). */
  rebuild(key: string, value: number, ttlMs: number): Promise<void>;
};

/** What a reserve with share `ppm` takes of `need`; both adapters and the settle use it. */
export function reservedOf(need: number, ppm: number): number {
  return Math.ceil((need * ppm) / 1_000_000);
}
