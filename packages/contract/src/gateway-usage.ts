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

/** Days `GET /api/v1/usage` covers when the query names no range: today (UTC) and the 29 before. */
export const USAGE_DEFAULT_DAYS = 30;

/** Query of `GET /api/v1/usage`; both ends are inclusive UTC days. */
export const ZUsageQuery = z
  .object({
    from: ZDay.optional().meta({
      description: `First day (UTC), inclusive. Default: ${USAGE_DEFAULT_DAYS - 1} days before \`to\`.`,
    }),
    to: ZDay.optional().meta({
      description: `Last day (UTC), inclusive; at most ${MAX_USAGE_RANGE_DAYS} days after from. Default: today (UTC).`,
    }),
    project_id: ZProjectId.optional().meta({ description: 'Only this project.' }),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { path: ['to'], message: 'must not be before from' })
  .refine((q) => !q.from || !q.to || daysBetween(q.from, q.to) < MAX_USAGE_RANGE_DAYS, {
    path: ['to'],
    message: `range must be at most ${MAX_USAGE_RANGE_DAYS} days`,
  });
export type UsageQuery = z.infer<typeof ZUsageQuery>;
export type UsageQueryInput = z.input<typeof ZUsageQuery>;

/**
 * The range a usage query stands for at `nowMs`: `to` defaults to today (UTC),
 * `from` to USAGE_DEFAULT_DAYS - 1 days before `to`. Check the result with
 * ZUsageQuery again (a lone `from` may be too far back).
 */
export function usageRange(
  query: Pick<UsageQuery, 'from' | 'to'>,
  nowMs: number,
): { from: string; to: string } {
  const to = query.to ?? new Date(nowMs).toISOString().slice(0, 10);
  const from =
    query.from ??
    new Date(Date.parse(`${to}T00:00:00Z`) - (USAGE_DEFAULT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  return { from, to };
}

const ZCount = z.number().int().min(0);

const ZCostMicros = ZCount.meta({ description: 'Cost in millionths of `currency` (1000000 = 1.00).' });

/** What every split of a project's day counts: its requests, their tokens and their cost. */
const usageTally = { requests: ZCount, total_tokens: ZCount, cost_micros: ZCostMicros };

/** One lane and model a project used on a day; requests that never reached a model have null. */
export const ZUsageModelRow = z
  .object({
    lane: z.string().nullable(),
    model: z.string().nullable().meta({ description: 'The model that served the requests.' }),
    provider: z.string().nullable(),
    ...usageTally,
  })
  .meta({ id: 'UsageModelRow' });
export type UsageModelRow = z.infer<typeof ZUsageModelRow>;

/** One API key's share of a project's day. */
export const ZUsageKeyRow = z
  .object({
    api_key_id: z.uuid().nullable(),
    ...usageTally,
  })
  .meta({ id: 'UsageKeyRow' });
export type UsageKeyRow = z.infer<typeof ZUsageKeyRow>;

/** Usage of one project on one day. */
export const ZUsageRow = z
  .object({
    project_id: z.string(),
    day: z.iso.date(),
    requests: ZCount,
    prompt_tokens: ZCount,
    completion_tokens: ZCount,
    total_tokens: ZCount,
    cached_tokens: ZCount.meta({ description: 'Prompt tokens served from the provider cache.' }),
    errors: ZCount.meta({ description: 'Requests that ended in an error.' }),
    cost_micros: ZCostMicros,
    byok_cost_micros: ZCount.meta({
      description: "Part of cost_micros paid by the caller's own provider keys (bring your own key).",
    }),
    currency: z.string().meta({ description: 'ISO 4217 code of the costs (AI_COST_CURRENCY).' }),
    models: z
      .array(ZUsageModelRow)
      .meta({ description: 'The same requests split by lane and model, most tokens first.' }),
    keys: z
      .array(ZUsageKeyRow)
      .meta({ description: 'The same requests split by API key (null: signed-in console calls).' }),
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

/** Most records one feed page returns. */
export const MAX_USAGE_FEED_LIMIT = 1000;

/** Query of the usage feeds (`/api/v1/usage/records`, `/api/v1/usage/feed`). */
export const ZUsageFeedQuery = z
  .object({
    cursor: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'next_cursor of the previous page; absent: from the oldest record kept.' }),
    limit: z.coerce.number().int().min(1).max(MAX_USAGE_FEED_LIMIT).default(100),
  })
  .meta({ id: 'UsageFeedQuery' });
export type UsageFeedQuery = z.infer<typeof ZUsageFeedQuery>;

/** Query of the service feed: the user filter is optional there. */
export const ZServiceUsageFeedQuery = ZUsageFeedQuery.extend({
  user_id: z.uuid().optional().meta({ description: "Only this user's records." }),
}).meta({ id: 'ServiceUsageFeedQuery' });
export type ServiceUsageFeedQuery = z.infer<typeof ZServiceUsageFeedQuery>;

/** One ledger record: one AI request, charged once. */
export const ZUsageRecord = z
  .object({
    id: z.uuid().meta({
      description:
        'The ledger id, minted by the gateway per request; unique: an idempotency key for billing.',
    }),
    client_request_id: z.uuid().nullable().meta({
      description:
        "The client's own x-request-id (lower-cased), for correlation only; null when it sent none.",
    }),
    user_id: z.uuid(),
    api_key_id: z.uuid().nullable(),
    project_id: z.string(),
    lane: z.string().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    endpoint: z.string(),
    status: z.number().int(),
    prompt_tokens: ZCount,
    completion_tokens: ZCount,
    cached_tokens: ZCount.meta({ description: 'Prompt tokens read from the provider cache.' }),
    cache_write_tokens: ZCount.meta({ description: 'Prompt tokens written to the provider cache.' }),
    total_tokens: ZCount,
    cost_micros: ZCostMicros,
    currency: z.string(),
    estimated: z
      .boolean()
      .meta({ description: 'Tokens estimated by the gateway (the provider reported none).' }),
    byok: z.boolean().meta({ description: "Paid by the caller's own provider key." }),
    created_at: ZIsoTimestamp,
  })
  .meta({ id: 'UsageRecord' });
export type UsageRecord = z.infer<typeof ZUsageRecord>;

/** A page of the feed, oldest first. Resume from `next_cursor`; it never skips a record. */
export const ZUsageFeedResponse = z
  .object({
    records: z.array(ZUsageRecord),
    next_cursor: z
      .string()
      .meta({ description: 'Pass as cursor for the next page (same value when empty).' }),
    has_more: z.boolean(),
  })
  .meta({ id: 'UsageFeedResponse' });
export type UsageFeedResponse = z.infer<typeof ZUsageFeedResponse>;

/**
 * `POST /api/v1/billing/subscription-changes`: payment's notice that the
 * user's subscription changed (docs/billing.md, paid lanes).
 */
export const ZSubscriptionChangeRequest = z
  .object({
    user_id: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,255}$/)
      .meta({ description: 'The user whose cached subscription status is stale (the gateway user id).' }),
  })
  .meta({ id: 'SubscriptionChangeRequest' });
export type SubscriptionChangeRequest = z.infer<typeof ZSubscriptionChangeRequest>;
