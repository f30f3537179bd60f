import type { PrismaClient } from '../generated/prisma/client';
import type { BudgetId, BudgetPeriod, BudgetRule, BudgetScope, BudgetUnit } from './rules';

/** The budgets a user set. */
export async function listUserBudgets(prisma: PrismaClient, userId: string): Promise<BudgetRule[]> {
  const rows = await prisma.budget.findMany({ where: { userId } });
  return rows.map((r) => ({
    scope: r.scope as BudgetScope,
    subject: r.subject,
    period: r.period as BudgetPeriod,
    unit: r.unit as BudgetUnit,
    limit: Number(r.limit),
  }));
}

export async function upsertUserBudget(
  prisma: PrismaClient,
  userId: string,
  rule: BudgetRule,
): Promise<void> {
  const id = { userId, scope: rule.scope, subject: rule.subject, period: rule.period, unit: rule.unit };
  await prisma.budget.upsert({
    where: { userId_scope_subject_period_unit: id },
    create: { ...id, limit: BigInt(rule.limit) },
    update: { limit: BigInt(rule.limit) },
  });
}

/** True when a budget was there to delete. */
export async function deleteUserBudget(prisma: PrismaClient, userId: string, id: BudgetId): Promise<boolean> {
  const { count } = await prisma.budget.deleteMany({ where: { userId, ...id } });
  return count > 0;
}

/** True when the API key exists and belongs to the user (a budget names only the caller's own keys). */
export async function ownsApiKey(prisma: PrismaClient, userId: string, apiKeyId: string): Promise<boolean> {
  return (await prisma.apiKey.count({ where: { id: apiKeyId, userId } })) > 0;
}
