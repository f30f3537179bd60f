import { Prisma, type PrismaClient } from '../generated/prisma/client';
import type { BudgetId, BudgetPeriod, BudgetRule, BudgetScope, BudgetUnit, BudgetWindow } from './rules';

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

/**
 * What a budget's subject used in a window, from the daily sums (total
 * tokens, or cost in micro-units): where a budget that starts being counted
 * mid-window begins. Records still in the ledger's stream (the last fraction
 * of a second) are not in it yet.
 */
export async function useInWindow(
  prisma: PrismaClient,
  userId: string,
  id: BudgetId,
  window: BudgetWindow,
): Promise<number> {
  const column = id.unit === 'tokens' ? Prisma.sql`total_tokens` : Prisma.sql`cost_micros`;
  const subject =
    id.scope === 'api_key'
      ? Prisma.sql`AND api_key_id = ${id.subject}`
      : id.scope === 'project'
        ? Prisma.sql`AND project_id = ${id.subject}`
        : Prisma.empty;
  const [row] = await prisma.$queryRaw<{ used: bigint | number | null }[]>`
    SELECT sum(${column})::bigint AS used FROM usage_daily
     WHERE user_id = ${userId}::uuid
       AND day >= ${new Date(window.startsAt)}::date AND day < ${new Date(window.endsAt)}::date
       ${subject}`;
  return Number(row?.used ?? 0);
}
