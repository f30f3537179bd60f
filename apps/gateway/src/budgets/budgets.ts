import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import { costMicros, type ModelPrice } from '../usage/pricing';
import type { BudgetCounterStore, CounterClaim } from './counter-store';
import { reservedOf } from './counter-store';
import {
  BUDGET_PERIODS,
  BUDGET_UNITS,
  type BudgetDefault,
  type BudgetId,
  type BudgetPeriod,
  type BudgetRule,
  type BudgetScope,
  type BudgetUnit,
  counterKey,
  describeBudget,
  windowOf,
} from './rules';

/** A counter without a limit still counts (a budget set mid-window sees the window's use); this is its "limit". */
const UNLIMITED = 9e15;
/** A counter outlives its window by this much, so a late settle never restarts an expired key's count. */
const TTL_MARGIN_MS = 3_600_000;

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
  /** Reserves, or throws 429 rate_limited (Retry-After, `details` naming the budget). */
  reserve(request: BudgetRequest): Promise<Reservation>;
  /** The user's daily tokens: used (settled + reserved), the limit, when it resets (GET /usage/today). */
  today(userId: string): Promise<{ day: string; used: number; budget: number; resetsAt: Date }>;
  /** The budgets in force for the user (their own and the defaults of scope user), with use. */
  list(userId: string): Promise<BudgetStatus[]>;
  /** The server's defaults. */
  readonly defaults: readonly BudgetDefault[];
  /** Forget cached rules of a user (after a change). */
  invalidate(userId: string): void;
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
 * key and project, daily and monthly (UTC), in shared counters. Every request
 * touches every counter of its user, key and project (so a budget set
 * mid-window counts the whole window); only those with a limit can refuse.
 * A limit is the lower of the server default and the user's own setting.
 */
export function createBudgets(opts: BudgetsOptions): Budgets {
  const now = opts.now ?? Date.now;
  const cacheMs = opts.cacheMs ?? 5000;
  const cache = new Map<string, { rules: BudgetRule[]; at: number }>();

  const userRules = async (userId: string): Promise<BudgetRule[]> => {
    const hit = cache.get(userId);
    const at = now();
    if (hit && at - hit.at >= 0 && at - hit.at < cacheMs) return hit.rules;
    let rules: BudgetRule[];
    try {
      rules = await opts.loadUserRules(userId);
    } catch (err) {
      // Postgres down: the last rules seen keep applying (the counters are in Redis), rather than refusing every call.
      if (!hit) throw err;
      opts.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'budget rules not reloaded; using the last ones',
      );
      return hit.rules;
    }
    if (cache.size >= 10_000) cache.clear();
    cache.set(userId, { rules, at });
    return rules;
  };

  const limitOf = (rules: readonly BudgetRule[], id: BudgetId): number | undefined => {
    const byDefault = opts.defaults.find(
      (d) => d.scope === id.scope && d.period === id.period && d.unit === id.unit,
    );
    const own = rules.find((r) => matches(r, id));
    if (byDefault && own) return Math.min(byDefault.limit, own.limit);
    return own?.limit ?? byDefault?.limit;
  };

  const idsOf = (req: Pick<BudgetRequest, 'apiKeyId' | 'projectId'>): BudgetId[] => {
    const subjects: [BudgetScope, string][] = [['user', '']];
    if (req.apiKeyId) subjects.push(['api_key', req.apiKeyId]);
    subjects.push(['project', req.projectId]);
    const ids: BudgetId[] = [];
    for (const [scope, subject] of subjects)
      for (const period of BUDGET_PERIODS)
        for (const unit of BUDGET_UNITS) ids.push({ scope, subject, period, unit });
    return ids;
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

  const userDailyTokens = (rules: readonly BudgetRule[]) =>
    limitOf(rules, { scope: 'user', subject: '', period: 'daily', unit: 'tokens' });

  return {
    defaults: opts.defaults,
    invalidate: (userId) => cache.delete(userId),
    async reserve(req) {
      const rules = await userRules(req.userId);
      const at = now();
      const needTokens = req.promptTokens + req.completionTokens;
      const needCost = costMicros(req.price, {
        promptTokens: req.promptTokens,
        completionTokens: req.completionTokens,
        cachedTokens: 0,
      });
      const ids = idsOf(req);
      const claims: CounterClaim[] = ids.map((id) => {
        const w = windowOf(id.period, at);
        return {
          key: counterKey(req.userId, id, w.label),
          limit: limitOf(rules, id) ?? UNLIMITED,
          need: id.unit === 'tokens' ? needTokens : needCost,
          ttlMs: w.endsAt - at + TTL_MARGIN_MS,
        };
      });
      // Admitted only if what is left holds the prompt and one completion
      // token: a request admitted at the edge is capped to what is left, so
      // with honest estimates what it is served never passes the budget.
      const minPpm = needTokens > 0 ? Math.floor(((req.promptTokens + 1) * 1_000_000) / needTokens) : 0;
      const result = await opts.store.reserve(claims, minPpm);
      if (!result.ok) {
        const id = ids[result.index] as BudgetId;
        throw refuse(id, (claims[result.index] as CounterClaim).limit, at);
      }
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
          await opts.store.adjust(
            claims.map((c, i) => ({
              key: c.key,
              by: (ids[i]?.unit === 'tokens' ? actual.totalTokens : actual.costMicros) - (reserved[i] ?? 0),
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
