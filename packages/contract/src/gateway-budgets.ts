import { z } from 'zod';
import { ZIsoTimestamp } from './common';
import { storableText, ZProjectId } from './gateway-common';

export const ZBudgetScope = z.enum(['user', 'api_key', 'project']);
export const ZBudgetPeriod = z.enum(['daily', 'monthly']);
export const ZBudgetUnit = z
  .enum(['tokens', 'cost'])
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
