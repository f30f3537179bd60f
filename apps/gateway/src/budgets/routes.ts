import {
  type Budget,
  type ListBudgetsResponse,
  type UsageTodayResponse,
  ZBudgetId,
  ZSetBudgetRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, type Response, Router } from 'express';
import { recordAudit } from '../audit/record';
import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { BudgetStatus, Budgets } from './budgets';
import { deleteUserBudget, listUserBudgets, ownsApiKey, upsertUserBudget, useInWindow } from './repo';
import type { BudgetId } from './rules';

/** A user's own limit of one budget, or null (what the audit log's before/after shows). */
async function ownLimit(sql: RawSql, userId: string, id: BudgetId): Promise<{ limit: number } | null> {
  const own = (await listUserBudgets(sql, userId)).find(
    (r) => r.scope === id.scope && r.subject === id.subject && r.period === id.period && r.unit === id.unit,
  );
  return own ? { limit: own.limit } : null;
}

const budgetTarget = (id: BudgetId) =>
  `budget:${id.scope}.${id.period}.${id.unit}${id.subject ? `:${id.subject}` : ''}`;

function toBudget(s: BudgetStatus): Budget {
  return {
    scope: s.scope,
    subject: s.subject,
    period: s.period,
    unit: s.unit,
    limit: s.limit,
    source: s.source,
    used: s.used,
    resets_at: s.resetsAt.toISOString(),
  };
}

/**
 * `GET /api/v1/usage/today`: today's tokens against the daily token budget.
 * `/api/v1/budgets`: list, set (PUT) and remove (DELETE) the caller's token
 * and cost budgets. `csrf` checks the Origin of session-authenticated writes.
 * A change applies at once on this instance and within the rules cache time
 * (5 s) on the others. A budget set where none was in force starts from the
 * window's use so far (the daily sums).
 */
export function createBudgetRouter(opts: {
  prisma: PrismaClient;
  /** Raw SQL on the same pool: the reads the reservation path shares (repo.ts). */
  sql: RawSql;
  budgets: Budgets;
  currency: string;
  auth: RequestHandler;
  /** The user `auth` let in: the budgets know no more of authentication than this. */
  userOf: (res: Response) => string;
  csrf: RequestHandler;
  logger: Logger;
}): Router {
  const router = Router();
  // A budget reading, under /usage for the contract's sake.
  router.get('/api/v1/usage/today', opts.auth, async (_req, res) => {
    const today = await opts.budgets.today(opts.userOf(res));
    res.json({
      day: today.day,
      total_tokens: today.used,
      daily_token_budget: today.budget,
      resets_at: today.resetsAt.toISOString(),
    } satisfies UsageTodayResponse);
  });
  router.get('/api/v1/budgets', opts.auth, async (_req, res) => {
    const budgets = await opts.budgets.list(opts.userOf(res));
    res.json({
      currency: opts.currency,
      budgets: budgets.map(toBudget),
      defaults: opts.budgets.defaults.map((d) => ({
        scope: d.scope,
        period: d.period,
        unit: d.unit,
        limit: d.limit,
      })),
    } satisfies ListBudgetsResponse);
  });
  router.put('/api/v1/budgets', opts.auth, opts.csrf, jsonBody('4kb'), async (req, res) => {
    const rule = parseRequestPart(ZSetBudgetRequest, req.body);
    const userId = opts.userOf(res);
    if (rule.scope === 'api_key' && !(await ownsApiKey(opts.prisma, userId, rule.subject)))
      throw new AppError('api_key_not_found');
    const counted = await opts.budgets.isCounted(userId, rule);
    const before = await ownLimit(opts.sql, userId, rule);
    await upsertUserBudget(opts.prisma, userId, rule);
    await recordAudit(opts, req, res, {
      action: 'budget.set',
      ownerUserId: userId,
      target: budgetTarget(rule),
      before,
      after: { limit: rule.limit },
    });
    // Not counted until now: its counter starts at the window's use so far.
    if (!counted) await opts.budgets.seed(userId, rule, (w) => useInWindow(opts.sql, userId, rule, w));
    opts.budgets.invalidate(userId);
    const shown = (await opts.budgets.list(userId)).find(
      (b) =>
        b.scope === rule.scope &&
        b.subject === rule.subject &&
        b.period === rule.period &&
        b.unit === rule.unit,
    );
    if (!shown) throw new AppError('internal');
    res.json(toBudget(shown));
  });
  router.delete('/api/v1/budgets', opts.auth, opts.csrf, async (req, res) => {
    const id = parseRequestPart(ZBudgetId, req.query);
    const userId = opts.userOf(res);
    const before = await ownLimit(opts.sql, userId, id);
    if (!(await deleteUserBudget(opts.prisma, userId, id))) throw new AppError('not_found');
    await recordAudit(opts, req, res, {
      action: 'budget.delete',
      ownerUserId: userId,
      target: budgetTarget(id),
      before,
    });
    opts.budgets.invalidate(userId);
    res.status(204).end();
  });
  return router;
}
