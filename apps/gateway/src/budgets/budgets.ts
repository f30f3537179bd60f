import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import { lruCache } from '../cache/lru';
import type { ApiKeyRules } from '../key-rules/rules';
import { costMicros, type ModelPrice } from '../usage/pricing';
import type { BudgetCounterStore, CounterClaim, GateVerdict, ReservationGate } from './counter-store';
import { reservedOf } from './counter-store';
import { keyRuleClaims, type RuleClaim } from './key-rule-claims';
import {
  type BudgetDefault,
  type BudgetId,
  type BudgetPeriod,
  type BudgetRule,
  type BudgetScope,
  type BudgetUnit,
  type BudgetWindow,
  counterKey,
  describeBudget,
  isUserDailyTokens,
  windowOf,
} from './rules';

/** The "limit" of the one counter counted without a limit (the user's daily tokens, for /usage/today). */
const UNLIMITED = 9e15;
/** A counter outlives its window by this much, so a late settle never restarts an expired key's count. */
const TTL_MARGIN_MS = 3_600_000;

/** Thrown by a reservation whose gate refused (ReservationGate); nothing was reserved. */
export class GateRefusedError extends Error {
  constructor(readonly verdict: GateVerdict) {
    super(`admission refused: ${verdict.refused}`);
    this.name = 'GateRefusedError';
  }
}

/** What a request asks of its budgets before the upstream call. */
export type BudgetRequest = {
  userId: string;
  apiKeyId: string | null;
  projectId: string;
  /** Estimated prompt tokens. */
  promptTokens: number;
  /** Most completion tokens the request may produce (its max_tokens, or the server's allowance). */
  completionTokens: number;
  /** The dearest price among the targets that may answer; undefined -> cost 0. */
  price: ModelPrice | undefined;
  /**
   * A cost per call on top of the tokens' (an MCP tool call's price, a
   * media request's cost at its dearest target), in micro-units. A request
   * with only this cost is admitted whole or refused.
   */
  fixedCostMicros?: number;
  /** The key's rules: its tokens per minute and concurrent requests are counted with the budgets. */
  keyRules?: ApiKeyRules | undefined;
  /** A stream's continuation: it takes no second concurrency slot. */
  continuation?: boolean;
};

/** The actual use of a request, once known. */
export type BudgetActual = { totalTokens: number; costMicros: number };

export type Reservation = {
  /**
   * Set when the budgets had less left than the request asked: the upstream
   * must be asked for at most this many completion tokens, so a request
   * admitted at a budget's edge cannot run far past it.
   */
  completionCap: number | undefined;
  /** Replaces the reservation by the actual figures; only the first call counts. */
  settle(actual: BudgetActual): Promise<void>;
};

/** A budget as the budget routes show it. */
export type BudgetStatus = BudgetRule & { used: number; resetsAt: Date; source: 'default' | 'user' };

export type Budgets = {
  /**
   * Reserves, or throws 429 rate_limited (Retry-After, `details` naming the
   * budget). With a `gate`, the request's key admission is checked in the
   * same store call, first: GateRefusedError when it refuses.
   */
  reserve(request: BudgetRequest, gate?: ReservationGate): Promise<Reservation>;
  /** The user's daily tokens: used (settled + reserved), the limit, when it resets (GET /usage/today). */
  today(userId: string): Promise<{ day: string; used: number; budget: number; resetsAt: Date }>;
  /** The budgets in force for the user (their own and the defaults of scope user), with use. */
  list(userId: string): Promise<BudgetStatus[]>;
  /** The server's defaults. */
  readonly defaults: readonly BudgetDefault[];
  /** Forget cached rules of a user (after a change). */
  invalidate(userId: string): void;
  /** Whether requests count this budget now (it has a limit in force, or is the user's daily tokens). */
  isCounted(userId: string, id: BudgetId): Promise<boolean>;
  /**
   * Starts the counter of a budget that was not counted (set mid-window) at
   * the window's use so far, as `useIn` reads it from the daily sums.
   */
  seed(userId: string, id: BudgetId, useIn: (window: BudgetWindow) => Promise<number>): Promise<void>;
};

export type BudgetsOptions = {
  store: BudgetCounterStore;
  defaults: readonly BudgetDefault[];
  /** The user's own budgets (Postgres); cached here for `cacheMs`. */
  loadUserRules: (userId: string) => Promise<BudgetRule[]>;
  logger: Logger;
  now?: () => number;
  /** How long one instance trusts its copy of a user's rules; a change made elsewhere applies within it. */
  cacheMs?: number;
  /**
   * A budget's use in a window from the daily sums (Postgres): what a counter
   * the store lost is rebuilt to before it admits anything. Absent: rebuilt
   * to 0 (unit tests without Postgres).
   */
  windowUse?: (userId: string, id: BudgetId, window: BudgetWindow) => Promise<number>;
};

function matches(rule: BudgetId, id: BudgetId): boolean {
  return (
    rule.scope === id.scope &&
    rule.subject === id.subject &&
    rule.period === id.period &&
    rule.unit === id.unit
  );
}

/**
 * Reservations and settlement of the token and cost budgets per user, API
 * key and project, daily and monthly (UTC), in shared counters. A request
 * touches the counters of the budgets in force for its user, key and project
 * (and always the user's daily tokens); a budget set mid-window starts from
 * the window's use in the daily sums (`seed`). A limit is the lower of the
 * server default and the user's own setting.
 *
 * Over 80 lines: the methods share the rules cache and the counter store; each is named (reserve, today, list, ...).
 */
export function createBudgets(opts: BudgetsOptions): Budgets {
  const now = opts.now ?? Date.now;
  const cacheMs = opts.cacheMs ?? 5000;
  // No expiry of its own: past `cacheMs` an entry is re-read, but kept for a Postgres outage.
  const cache = lruCache<string, { rules: BudgetRule[]; at: number }>({ max: 10_000 });

  // One read of a user's rules at a time: when the copy is stale, the requests that arrive
  // meanwhile wait for the same read. Without it, a burst of one user's requests after the
  // copy went stale made one Postgres query each (1,000 at once at 2,000 open streams), and
  // the pool's connect time-out then refused other queries of the worker too (503s).
  const loading = new Map<string, Promise<BudgetRule[]>>();
  const readRules = (userId: string): Promise<BudgetRule[]> => {
    const inFlight = loading.get(userId);
    if (inFlight) return inFlight;
    const at = now();
    const load = opts.loadUserRules(userId).then(
      (rules) => {
        // Not when invalidated meanwhile: a read begun before a change must not keep its rules.
        if (loading.get(userId) === load) cache.set(userId, { rules, at });
        return rules;
      },
      (err: unknown) => {
        // Logged once per failed read (its waiters share it), not once per waiting request.
        if (loading.get(userId) === load && cache.get(userId))
          opts.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'budget rules not reloaded; using the last ones',
          );
        throw err;
      },
    );
    loading.set(userId, load);
    const done = () => {
      if (loading.get(userId) === load) loading.delete(userId);
    };
    load.then(done, done);
    return load;
  };

  const userRules = async (userId: string): Promise<BudgetRule[]> => {
    const hit = cache.get(userId);
    const at = now();
    if (hit && at - hit.at >= 0 && at - hit.at < cacheMs) return hit.rules;
    try {
      return await readRules(userId);
    } catch (err) {
      // Postgres down: the last rules seen keep applying (the counters are in Redis), rather than refusing every call.
      if (!hit) throw err;
      return hit.rules;
    }
  };

  const limitOf = (rules: readonly BudgetRule[], id: BudgetId): number | undefined => {
    const byDefault = opts.defaults.find(
      (d) => d.scope === id.scope && d.period === id.period && d.unit === id.unit,
    );
    const own = rules.find((r) => matches(r, id));
    if (byDefault && own) return Math.min(byDefault.limit, own.limit);
    return own?.limit ?? byDefault?.limit;
  };

  /** The budgets a request counts: every default and own rule of its user, key and project, and the user's daily tokens. */
  const idsOf = (
    rules: readonly BudgetRule[],
    req: Pick<BudgetRequest, 'apiKeyId' | 'projectId'>,
  ): BudgetId[] => {
    const ids: BudgetId[] = [{ scope: 'user', subject: '', period: 'daily', unit: 'tokens' }];
    const add = (id: BudgetId) => {
      if (!ids.some((known) => matches(known, id))) ids.push(id);
    };
    const subjectOf = (scope: BudgetScope): string | null =>
      scope === 'user' ? '' : scope === 'api_key' ? req.apiKeyId : req.projectId;
    for (const d of opts.defaults) {
      const subject = subjectOf(d.scope);
      if (subject !== null) add({ scope: d.scope, subject, period: d.period, unit: d.unit });
    }
    for (const r of rules) if (subjectOf(r.scope) === r.subject) add(r);
    return ids;
  };

  /** A request that needs more than the budget's whole window: no retry can help, so no Retry-After. */
  const tooLarge = (id: BudgetId, limit: number, least: number): AppError => {
    const unit = id.unit === 'cost' ? ' micro-units' : ' tokens';
    return new AppError('request_exceeds_budget', {
      details: [
        {
          path: `budget.${id.scope}.${id.period}.${id.unit}`,
          message: `${describeBudget(id)} (${limit}${unit}) is smaller than this request (at least ${least}${unit})`,
        },
      ],
    });
  };

  const refuse = (id: BudgetId, limit: number, at: number): AppError =>
    new AppError('rate_limited', {
      headers: {
        'Retry-After': String(Math.max(1, Math.ceil((windowOf(id.period, at).endsAt - at) / 1000))),
      },
      details: [
        {
          path: `budget.${id.scope}.${id.period}.${id.unit}`,
          message: `${describeBudget(id)} (${limit}${id.unit === 'cost' ? ' micro-units' : ' tokens'}) is spent`,
        },
      ],
    });

  /** Lost counters set (if still absent) to their window's use in the daily sums, logged. */
  const rebuild = async (
    userId: string,
    indices: readonly number[],
    ids: readonly BudgetId[],
    claims: readonly CounterClaim[],
    windows: Record<BudgetPeriod, BudgetWindow>,
  ) => {
    await Promise.all(
      indices.map(async (i) => {
        const id = ids[i] as BudgetId;
        const claim = claims[i] as CounterClaim;
        const used = opts.windowUse ? await opts.windowUse(userId, id, windows[id.period]) : 0;
        await opts.store.rebuild(claim.key, used, claim.ttlMs);
        opts.logger.warn(
          { budget: claim.key, used },
          'budget counter missing in its window; rebuilt from the daily sums',
        );
      }),
    );
  };

  const userDailyTokens = (rules: readonly BudgetRule[]) =>
    limitOf(rules, { scope: 'user', subject: '', period: 'daily', unit: 'tokens' });

  /** The 429 of a reservation refused at counter `index` (budgets first, then the key's rule counters). */
  const refusalOf = (
    index: number,
    asked: { ids: readonly BudgetId[]; ruleClaims: readonly RuleClaim[]; claims: readonly CounterClaim[] },
    minPpm: number,
    at: number,
  ): AppError => {
    const { ids, ruleClaims, claims } = asked;
    // One that could never fit says so first: waiting for the window to reset would not help.
    const never = claims.findIndex((c) => reservedOf(c.need, minPpm) > c.limit);
    if (never >= 0) {
      const claim = claims[never] as CounterClaim;
      const least = reservedOf(claim.need, minPpm);
      const rule = ruleClaims[never - ids.length];
      return rule ? rule.tooLarge(least) : tooLarge(ids[never] as BudgetId, claim.limit, least);
    }
    const rule = ruleClaims[index - ids.length];
    if (rule) return rule.refuse(at);
    return refuse(ids[index] as BudgetId, (claims[index] as CounterClaim).limit, at);
  };

  return {
    defaults: opts.defaults,
    invalidate: (userId) => {
      cache.delete(userId);
      loading.delete(userId);
    },
    async isCounted(userId, id) {
      return isUserDailyTokens(id) || limitOf(await opts.loadUserRules(userId), id) !== undefined;
    },
    async seed(userId, id, useIn) {
      const at = now();
      const w = windowOf(id.period, at);
      const used = await useIn(w);
      await opts.store.seed(counterKey(userId, id, w.label), used, w.endsAt - at + TTL_MARGIN_MS);
    },
    async reserve(req, gate) {
      const rules = await userRules(req.userId);
      const at = now();
      const needTokens = req.promptTokens + req.completionTokens;
      const fixedCost = req.fixedCostMicros ?? 0;
      const needCost =
        fixedCost +
        costMicros(req.price, {
          promptTokens: req.promptTokens,
          completionTokens: req.completionTokens,
          cachedTokens: 0,
        });
      const ids = idsOf(rules, req);
      const windows = { daily: windowOf('daily', at), monthly: windowOf('monthly', at) };
      const budgetClaims: CounterClaim[] = ids.map((id) => {
        const w = windows[id.period];
        return {
          key: counterKey(req.userId, id, w.label),
          limit: limitOf(rules, id) ?? UNLIMITED,
          need: id.unit === 'tokens' ? needTokens : needCost,
          ttlMs: w.endsAt - at + TTL_MARGIN_MS,
          windowStartsAt: w.startsAt,
        };
      });
      // The key's own per-minute tokens and concurrency: after the budgets, in the same atomic step.
      const ruleClaims = keyRuleClaims(req.apiKeyId, req.keyRules, needTokens, at, req.continuation);
      const claims = [...budgetClaims, ...ruleClaims.map((r) => r.claim)];
      const kinds = [...ids.map((id) => id.unit), ...ruleClaims.map((r) => r.kind)];
      // Admitted only if what is left holds the prompt and one completion
      // token: a request admitted at the edge is capped to what is left, so
      // with honest estimates what it is served never passes the budget.
      // A request without completion to cap (media, embeddings, a tool call) is reserved whole or not at all.
      const minPpm =
        req.completionTokens === 0
          ? 1_000_000
          : Math.floor(((req.promptTokens + 1) * 1_000_000) / needTokens);
      let result = await opts.store.reserve(claims, minPpm, gate);
      // Counters the store lost are rebuilt from the daily sums before anything is admitted.
      for (let round = 0; !result.ok && 'rebuild' in result && round < 3; round += 1) {
        await rebuild(req.userId, result.rebuild, ids, claims, windows);
        result = await opts.store.reserve(claims, minPpm, gate);
      }
      if (!result.ok && 'rebuild' in result) throw new AppError('service_unavailable');
      if (!result.ok && 'gate' in result) throw new GateRefusedError(result.gate);
      if (!result.ok) throw refusalOf(result.index, { ids, ruleClaims, claims }, minPpm, at);
      const reserved = claims.map((c) => reservedOf(c.need, result.ppm));
      const completionCap =
        result.ppm < 1_000_000
          ? Math.max(1, reservedOf(needTokens, result.ppm) - req.promptTokens)
          : undefined;
      let settled = false;
      return {
        completionCap,
        async settle(actual) {
          if (settled) return;
          settled = true;
          // A slot (concurrency) is given back whole; tokens and cost become the actual figures.
          const used = { tokens: actual.totalTokens, cost: actual.costMicros, slot: 0 };
          await opts.store.adjust(
            claims.map((c, i) => ({
              key: c.key,
              by: used[kinds[i] ?? 'tokens'] - (reserved[i] ?? 0),
              ttlMs: c.ttlMs,
            })),
          );
        },
      };
    },
    async today(userId) {
      const rules = await userRules(userId);
      const at = now();
      const w = windowOf('daily', at);
      const [used = 0] = await opts.store.read([
        counterKey(userId, { scope: 'user', subject: '', period: 'daily', unit: 'tokens' }, w.label),
      ]);
      return {
        day: w.label,
        used,
        budget: userDailyTokens(rules) ?? UNLIMITED,
        resetsAt: new Date(w.endsAt),
      };
    },
    async list(userId) {
      const rules = await userRules(userId);
      const at = now();
      const shown: (BudgetRule & { source: 'default' | 'user' })[] = rules.map((r) => ({
        ...r,
        limit: limitOf(rules, r) ?? r.limit,
        source: 'user',
      }));
      for (const d of opts.defaults) {
        if (d.scope !== 'user' || shown.some((r) => matches(r, { ...d, subject: '' }))) continue;
        shown.push({ ...d, subject: '', source: 'default' });
      }
      const keys = shown.map((r) => counterKey(userId, r, windowOf(r.period, at).label));
      const used = await opts.store.read(keys);
      return shown.map((r, i) => ({
        ...r,
        used: used[i] ?? 0,
        resetsAt: new Date(windowOf(r.period, at).endsAt),
      }));
    },
  };
}

export type { BudgetPeriod, BudgetUnit };
