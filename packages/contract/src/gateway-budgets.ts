import { z } from 'zod';
import { ZIsoTimestamp } from './common';
import { storableText, ZProjectId } from './gateway-common';

/**
 * The budget kinds, the one table: every scope, period and unit a budget can
 * have. The schemas below, the gateway's arrays and types (budgets/rules.ts)
 * and the AI_BUDGET_DEFAULTS pattern are derived from it.
 */
export const BUDGET_KINDS = {
  scopes: ['user', 'api_key', 'project'],
  periods: ['daily', 'monthly'],
  units: ['tokens', 'cost'],
} as const;

/** `scope.period.unit=limit`: an entry of the gateway's AI_BUDGET_DEFAULTS, over BUDGET_KINDS. */
export const BUDGET_DEFAULT_ENTRY = new RegExp(
  `^(${BUDGET_KINDS.scopes.join('|')})\\.(${BUDGET_KINDS.periods.join('|')})\\.(${BUDGET_KINDS.units.join('|')})=\\d{1,15}$`,
);

export const ZBudgetScope = z.enum(BUDGET_KINDS.scopes);
export const ZBudgetPeriod = z.enum(BUDGET_KINDS.periods);
export const ZBudgetUnit = z
  .enum(BUDGET_KINDS.units)
  .meta({ description: '`tokens`: total tokens; `cost`: micro-units of the gateway currency.' });

/** Which budget: `subject` is '' for scope user, the API key id, or the project id. */
export const ZBudgetId = z
  .object({
    scope: ZBudgetScope,
    subject: storableText(z.string().max(128)).default(''),
    period: ZBudgetPeriod,
    unit: ZBudgetUnit,
  })
  .superRefine((b, ctx) => {
    if (b.scope === 'user' && b.subject !== '')
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'must be empty for scope user' });
    if (b.scope === 'api_key' && !z.uuid().safeParse(b.subject).success)
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'must be an API key id' });
    if (b.scope === 'project' && !ZProjectId.safeParse(b.subject).success)
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'must be a project id' });
  })
  .meta({ id: 'BudgetId' });
export type BudgetIdInput = z.input<typeof ZBudgetId>;

/** `PUT /api/v1/budgets`: sets (or replaces) one budget. A server default caps it. */
export const ZSetBudgetRequest = z
  .object({ ...ZBudgetId.shape, limit: z.number().int().min(0).max(1e15) })
  .superRefine((b, ctx) => {
    const id = ZBudgetId.safeParse(b);
    if (!id.success)
      for (const issue of id.error.issues)
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .meta({ id: 'SetBudgetRequest' });
export type SetBudgetRequest = z.infer<typeof ZSetBudgetRequest>;
export type SetBudgetInput = z.input<typeof ZSetBudgetRequest>;

/** A budget in force, with what its current window used (settled and reserved). */
export const ZBudget = z
  .object({
    scope: ZBudgetScope,
    subject: z.string(),
    period: ZBudgetPeriod,
    unit: ZBudgetUnit,
    limit: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'In force: the lower of the default and your setting.' }),
    source: z.enum(['default', 'user']),
    used: z.number().int(),
    resets_at: ZIsoTimestamp,
  })
  .meta({ id: 'Budget' });
export type Budget = z.infer<typeof ZBudget>;

/** `GET /api/v1/budgets`. */
export const ZListBudgetsResponse = z
  .object({
    currency: z.string(),
    budgets: z.array(ZBudget),
    defaults: z
      .array(
        z.object({ scope: ZBudgetScope, period: ZBudgetPeriod, unit: ZBudgetUnit, limit: z.number().int() }),
      )
      .meta({ description: 'The server defaults; each applies to every subject of its scope.' }),
  })
  .meta({ id: 'ListBudgetsResponse' });
export type ListBudgetsResponse = z.infer<typeof ZListBudgetsResponse>;
