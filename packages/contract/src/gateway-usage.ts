import { z } from 'zod';
import { ZIsoTimestamp } from './common';
import { ZProjectId } from './gateway-common';

/** Longest window one usage query may span, so one call cannot scan years of rows. */
export const MAX_USAGE_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;

function daysBetween(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS;
}

const ZDay = z.iso.date().meta({ example: '2026-11-01' });

/** Query of `GET /api/v1/usage`; both ends are inclusive UTC days. */
export const ZUsageQuery = z
  .object({
    from: ZDay.meta({ description: 'First day (UTC), inclusive.' }),
    to: ZDay.meta({
      description: `Last day (UTC), inclusive; at most ${MAX_USAGE_RANGE_DAYS} days after from.`,
    }),
    project_id: ZProjectId.optional().meta({ description: 'Only this project.' }),
  })
  .refine((q) => q.from <= q.to, { path: ['to'], message: 'must not be before from' })
  .refine((q) => daysBetween(q.from, q.to) < MAX_USAGE_RANGE_DAYS, {
    path: ['to'],
    message: `range must be at most ${MAX_USAGE_RANGE_DAYS} days`,
  });
export type UsageQuery = z.infer<typeof ZUsageQuery>;

const ZCount = z.number().int().min(0);

/** One lane and model a project used on a day; requests that never reached a model have null. */
export const ZUsageModelRow = z
  .object({
    lane: z.string().nullable(),
    model: z.string().nullable().meta({ description: 'The model that served the requests.' }),
    requests: ZCount,
    total_tokens: ZCount,
  })
  .meta({ id: 'UsageModelRow' });
export type UsageModelRow = z.infer<typeof ZUsageModelRow>;

/** Usage of one project on one day. */
export const ZUsageRow = z
  .object({
    project_id: z.string(),
    day: z.iso.date(),
    requests: ZCount,
    prompt_tokens: ZCount,
    completion_tokens: ZCount,
    total_tokens: ZCount,
    errors: ZCount.meta({ description: 'Requests that ended in an error.' }),
    models: z
      .array(ZUsageModelRow)
      .meta({ description: 'The same requests split by lane and model, most tokens first.' }),
  })
  .meta({ id: 'UsageRow' });
export type UsageRow = z.infer<typeof ZUsageRow>;

/** `GET /api/v1/usage` 200, ordered by day then project_id. */
export const ZUsageResponse = z.object({ usage: z.array(ZUsageRow) }).meta({ id: 'UsageResponse' });
export type UsageResponse = z.infer<typeof ZUsageResponse>;

/** `GET /api/v1/usage/today` 200: the caller's tokens today (UTC) against the daily budget. */
export const ZUsageTodayResponse = z
  .object({
    day: z.iso.date(),
    total_tokens: ZCount.meta({ description: 'Tokens charged to the budget today.' }),
    daily_token_budget: ZCount.meta({
      description: 'AI_DAILY_TOKEN_BUDGET; at or over it AI calls get 429.',
    }),
    resets_at: ZIsoTimestamp.meta({ description: 'Next UTC midnight, when the count starts again.' }),
  })
  .meta({ id: 'UsageTodayResponse' });
export type UsageTodayResponse = z.infer<typeof ZUsageTodayResponse>;
