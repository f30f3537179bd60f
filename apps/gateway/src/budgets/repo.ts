import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { BudgetId, BudgetPeriod, BudgetRule, BudgetScope, BudgetUnit, BudgetWindow } from './rules';

type BudgetSqlRow = {
  scope: string;
  subject: string;
  period: string;
  unit: string;
  limit: string | number | bigint;
};

/**
 * The budgets a user set. On raw SQL (the pool's `pg`): every chat's
 * reservation may read them, and a chat's queries stay off Prisma's query
 * compiler (~8-9 MB per worker once loaded; docs/performance.md, issue 46).
 */
export async function listUserBudgets(sql: RawSql, userId: string): Promise<BudgetRule[]> {
  const rows = await sql.query<BudgetSqlRow>(
    'SELECT scope, subject, period, unit, "limit" FROM budgets WHERE user_id = $1::uuid',
    [userId],
  );
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
  sql: RawSql,
  userId: string,
  id: BudgetId,
  window: BudgetWindow,
): Promise<number> {
  // Both names are constants chosen here, never the caller's text.
  const column = id.unit === 'tokens' ? 'total_tokens' : 'cost_micros';
  const subject =
    id.scope === 'api_key' ? 'AND api_key_id = $4' : id.scope === 'project' ? 'AND project_id = $4' : '';
  // Days are UTC days (usage_daily.day), passed as their dates.
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const params: unknown[] = [userId, day(window.startsAt), day(window.endsAt)];
  if (subject) params.push(id.subject);
  const [row] = await sql.query<{ used: string | number | bigint | null }>(
    `SELECT sum(${column})::bigint AS used FROM usage_daily
      WHERE user_id = $1::uuid
        AND day >= $2::date AND day < $3::date ${subject}`,
    params,
  );
  return Number(row?.used ?? 0);
}
