import { BUDGET_DEFAULT_ENTRY, BUDGET_KINDS } from '@platform/contract';
import { z } from 'zod';

export const BUDGET_SCOPES = BUDGET_KINDS.scopes;
export const BUDGET_PERIODS = BUDGET_KINDS.periods;
export const BUDGET_UNITS = BUDGET_KINDS.units;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
/** `tokens`: total tokens; `cost`: micro-units of the configured currency. */
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** Which budget: scope + subject (''/key id/project id) + period + unit. */
export type BudgetId = { scope: BudgetScope; subject: string; period: BudgetPeriod; unit: BudgetUnit };
export type BudgetRule = BudgetId & { limit: number };

/** A server default: applies to every subject of its scope. */
export type BudgetDefault = Omit<BudgetRule, 'subject'>;

const DAY_MS = 86_400_000;

/** A UTC window: its label (YYYY-MM-DD or YYYY-MM), when it starts and when it ends. */
export type BudgetWindow = { label: string; startsAt: number; endsAt: number };

// The last window of each period: every reservation asks for the current one.
const lastWindow: { [P in BudgetPeriod]?: BudgetWindow } = {};

/** The UTC window `at` falls in (the object is shared: do not change it). */
export function windowOf(period: BudgetPeriod, at: number): BudgetWindow {
  const last = lastWindow[period];
  if (last && at >= last.startsAt && at < last.endsAt) return last;
  const window = computeWindow(period, at);
  lastWindow[period] = window;
  return window;
}

function computeWindow(period: BudgetPeriod, at: number): BudgetWindow {
  const d = new Date(at);
  if (period === 'daily') {
    const start = at - (at % DAY_MS);
    return { label: d.toISOString().slice(0, 10), startsAt: start, endsAt: start + DAY_MS };
  }
  return {
    label: d.toISOString().slice(0, 7),
    startsAt: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    endsAt: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** The user's daily tokens: always counted, whatever the limits (GET /usage/today reads it). */
export function isUserDailyTokens(id: BudgetId): boolean {
  return id.scope === 'user' && id.period === 'daily' && id.unit === 'tokens';
}

/**
 * The Redis counter of a budget's window. The user's daily tokens keep the
 * key of the earlier daily budget (`budget:tokens:<user>:<day>`), so a rolling
 * upgrade counts one day once. Project ids are per user, so the project key
 * carries the user id (a fixed-length UUID: no ambiguity).
 */
export function counterKey(userId: string, id: BudgetId, label: string): string {
  if (id.scope === 'user') return `budget:${id.unit}:${userId}:${label}`;
  if (id.scope === 'api_key') return `budget:${id.unit}:key:${id.subject}:${label}`;
  return `budget:${id.unit}:project:${userId}:${id.subject}:${label}`;
}

/** `scope.period.unit=limit` entries of AI_BUDGET_DEFAULTS. */
const ZDefaultEntry = z.string().regex(BUDGET_DEFAULT_ENTRY, 'must be scope.period.unit=limit');

export function parseBudgetDefaults(entries: readonly string[]): BudgetDefault[] {
  return entries.map((entry) => {
    ZDefaultEntry.parse(entry);
    const [path = '', limit = '0'] = entry.split('=');
    const [scope, period, unit] = path.split('.') as [BudgetScope, BudgetPeriod, BudgetUnit];
    return { scope, period, unit, limit: Number(limit) };
  });
}

/** How a budget is named to a client (429 details, budget list). */
export function describeBudget(id: BudgetId): string {
  const subject =
    id.scope === 'user' ? 'user' : `${id.scope === 'api_key' ? 'API key' : 'project'} ${id.subject}`;
  return `${id.period} ${id.unit} budget of ${subject}`;
}
