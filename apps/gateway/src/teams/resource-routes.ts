import {
  type TeamBudgetsResponse,
  usageRange,
  ZBudgetId,
  ZProviderKeyParams,
  ZSetBudgetRequest,
  ZStoreProviderKeyRequest,
  ZUsageQuery,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import type { Router } from 'express';
import {
  deleteUserBudget,
  listUserBudgets,
  ownsApiKey,
  upsertUserBudget,
  useInWindow,
} from '../budgets/repo';
import type { BudgetId } from '../budgets/rules';
import { listProviderKeys } from '../provider-keys/list-provider-keys';
import { removeProviderKey } from '../provider-keys/remove-provider-key';
import { storeProviderKey } from '../provider-keys/store-provider-key';
import { summariseUsage } from '../usage/repo';
import { teamOf } from './access';
import { auditTeam, type Guards, type TeamDeps } from './team-deps';

const budgetTarget = (id: BudgetId) =>
  `budget:${id.scope}.${id.period}.${id.unit}${id.subject ? `:${id.subject}` : ''}`;

/**
 * A team's budgets (set, remove, list with their use), usage and spend, and
 * provider keys (bring your own key shared by the team): the same operations
 * as a user's, on the team's billing subject.
 */
export function addTeamResourceRoutes(router: Router, deps: TeamDeps, read: Guards, write: Guards): void {
  addTeamBudgetRoutes(router, deps, read, write);
  addTeamProviderKeyRoutes(router, deps, read, write);
}

function addTeamBudgetRoutes(router: Router, deps: TeamDeps, read: Guards, write: Guards): void {
  router.get('/api/v1/teams/:teamId/budgets', ...read('budgets.read'), async (_req, res) => {
    const subject = teamOf(res).team.subjectUserId;
    const [budgets, today] = await Promise.all([deps.budgets.list(subject), deps.budgets.today(subject)]);
    res.json({
      currency: deps.env.AI_COST_CURRENCY,
      today: { day: today.day, total_tokens: today.used },
      budgets: budgets.map((b) => ({
        scope: b.scope,
        subject: b.subject,
        period: b.period,
        unit: b.unit,
        limit: b.limit,
        used: b.used,
        source: b.source,
        resets_at: b.resetsAt.toISOString(),
      })),
    } satisfies TeamBudgetsResponse);
  });
  router.put('/api/v1/teams/:teamId/budgets', ...write('budgets.write'), async (req, res) => {
    const rule = parseRequestPart(ZSetBudgetRequest, req.body);
    const subject = teamOf(res).team.subjectUserId;
    if (rule.scope === 'api_key' && !(await ownsApiKey(deps.prisma, subject, rule.subject)))
      throw new AppError('api_key_not_found');
    const counted = await deps.budgets.isCounted(subject, rule);
    await upsertUserBudget(deps.prisma, subject, rule);
    if (!counted) await deps.budgets.seed(subject, rule, (w) => useInWindow(deps.sql, subject, rule, w));
    deps.budgets.invalidate(subject);
    await auditTeam(deps, req, res, {
      action: 'budget.set',
      target: budgetTarget(rule),
      after: { limit: rule.limit },
    });
    res.json({ ...rule });
  });
  router.delete('/api/v1/teams/:teamId/budgets', ...write('budgets.write'), async (req, res) => {
    const id = parseRequestPart(ZBudgetId, req.query);
    const subject = teamOf(res).team.subjectUserId;
    const before = (await listUserBudgets(deps.sql, subject)).find(
      (r) => r.scope === id.scope && r.subject === id.subject && r.period === id.period && r.unit === id.unit,
    );
    if (!before || !(await deleteUserBudget(deps.prisma, subject, id))) throw new AppError('not_found');
    deps.budgets.invalidate(subject);
    await auditTeam(deps, req, res, {
      action: 'budget.delete',
      target: budgetTarget(id),
      before: { limit: before.limit },
    });
    res.status(204).end();
  });
  // The team's usage and spend per project and day, as GET /api/v1/usage shows a user's.
  router.get('/api/v1/teams/:teamId/usage', ...read('usage.read'), async (req, res) => {
    const asked = parseRequestPart(ZUsageQuery, req.query);
    const query = parseRequestPart(ZUsageQuery, { ...asked, ...usageRange(asked, deps.clock()) });
    const usage = await summariseUsage(deps.prisma, {
      userId: teamOf(res).team.subjectUserId,
      from: query.from as string,
      to: query.to as string,
      projectId: query.project_id,
      currency: deps.env.AI_COST_CURRENCY,
    });
    res.json({ usage });
  });
}

function addTeamProviderKeyRoutes(router: Router, deps: TeamDeps, read: Guards, write: Guards): void {
  router.get('/api/v1/teams/:teamId/provider-keys', ...read('provider_keys.read'), async (_req, res) => {
    res.json(await listProviderKeys(deps, teamOf(res).team.subjectUserId));
  });
  router.post('/api/v1/teams/:teamId/provider-keys', ...write('provider_keys.write'), async (req, res) => {
    const body = parseRequestPart(ZStoreProviderKeyRequest, req.body);
    const stored = await storeProviderKey(deps, { userId: teamOf(res).team.subjectUserId, ...body });
    await auditTeam(deps, req, res, {
      action: 'provider_key.set',
      target: `provider_key:${body.provider}`,
      after: stored,
    });
    res.status(201).json(stored);
  });
  router.delete(
    '/api/v1/teams/:teamId/provider-keys/:provider',
    ...write('provider_keys.write'),
    async (req, res) => {
      const { provider } = parseRequestPart(ZProviderKeyParams, req.params);
      await removeProviderKey(deps, { userId: teamOf(res).team.subjectUserId, provider });
      await auditTeam(deps, req, res, { action: 'provider_key.delete', target: `provider_key:${provider}` });
      res.status(204).end();
    },
  );
}
