import { type UsageResponse, type UsageTodayResponse, ZUsageQuery } from '@platform/contract';
import { parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import type { TokenBudget } from '../ai/runtime';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import { summariseUsage } from './repo';

/**
 * `GET /api/v1/usage?from=YYYY-MM-DD&to=YYYY-MM-DD[&project_id=]`: the
 * caller's usage per project and UTC day. Rows are written in batches, so the
 * last second or so of requests may not be counted yet.
 * `GET /api/v1/usage/today`: today's tokens against the daily budget.
 */
export function createUsageRouter(opts: {
  prisma: PrismaClient;
  auth: RequestHandler;
  budget: TokenBudget;
}): Router {
  const router = Router();
  router.get('/', opts.auth, async (req, res) => {
    const query = parseRequestPart(ZUsageQuery, req.query);
    const usage = await summariseUsage(opts.prisma, {
      userId: requireAuthOf(res).userId,
      from: query.from,
      to: query.to,
      projectId: query.project_id,
    });
    res.json({ usage } satisfies UsageResponse);
  });
  router.get('/today', opts.auth, async (_req, res) => {
    const today = await opts.budget.today(requireAuthOf(res).userId);
    res.json({
      day: today.day,
      total_tokens: today.used,
      daily_token_budget: today.budget,
      resets_at: today.resetsAt.toISOString(),
    } satisfies UsageTodayResponse);
  });
  return router;
}
