import type { UsageRow } from '@platform/contract';
import type { PrismaClient } from '../generated/prisma/client';
import type { LedgerRecord } from './record';

/**
 * The columns insertLedgerRecords writes, in valuesOf's order, with the SQL
 * type each is bound as: the batch goes in as one array per column.
 */
const RECORD_COLUMNS = [
  ['request_id', 'uuid'],
  ['user_id', 'uuid'],
  ['api_key_id', 'uuid'],
  ['project_id', 'text'],
  ['endpoint', 'text'],
  ['lane', 'text'],
  ['provider', 'text'],
  ['model', 'text'],
  ['status', 'int'],
  ['prompt_tokens', 'int'],
  ['completion_tokens', 'int'],
  ['cached_tokens', 'int'],
  ['cache_write_tokens', 'int'],
  ['total_tokens', 'int'],
  ['cost_micros', 'bigint'],
  ['currency', 'text'],
  ['estimated', 'boolean'],
  ['byok', 'boolean'],
  ['latency_ms', 'int'],
  ['created_at', 'timestamptz'],
] as const;

/**
 * Postgres text cannot hold NUL; one client-chosen project_id with it would fail
 * the whole batch. It is stored as U+FFFD, as UTF-8 encoding already stores a
 * lone surrogate.
 */
export function storable(value: unknown): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value;
}

function valuesOf(r: LedgerRecord): unknown[] {
  return [
    r.requestId,
    r.userId,
    r.apiKeyId ?? null,
    r.projectId,
    r.endpoint,
    r.lane ?? null,
    r.provider ?? null,
    r.model ?? null,
    // Integer columns: a provider's fractional count is stored rounded, never refused.
    Math.round(r.status),
    Math.round(r.promptTokens),
    Math.round(r.completionTokens),
    Math.round(r.cachedTokens),
    Math.round(r.cacheWriteTokens ?? 0),
    Math.round(r.totalTokens),
    Math.round(r.costMicros),
    r.currency,
    r.estimated,
    r.byok,
    Math.max(0, Math.round(r.latencyMs)),
    new Date(r.createdAt).toISOString(),
  ];
}

/** The one statement of insertLedgerRecords: its rows, and their daily sums (only of rows actually inserted). */
const INSERT_LEDGER_SQL = `WITH ins AS (
   INSERT INTO usage_records (${RECORD_COLUMNS.map(([name]) => name).join(',')},xid)
   SELECT *, pg_current_xact_id()::text::bigint
     FROM unnest(${RECORD_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(',')})
   ON CONFLICT (request_id) DO NOTHING
   RETURNING *
 ), sums AS (
   INSERT INTO usage_daily (user_id, day, project_id, api_key_id, lane, provider, model, byok, currency,
                            requests, errors, estimated, prompt_tokens, completion_tokens, cached_tokens,
                            total_tokens, cost_micros)
   SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, project_id, coalesce(api_key_id::text, ''),
          coalesce(lane, ''), coalesce(provider, ''), coalesce(model, ''), byok, currency,
          count(*), count(*) FILTER (WHERE status >= 400), count(*) FILTER (WHERE estimated),
          sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens), sum(total_tokens), sum(cost_micros)
     FROM ins
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
   ON CONFLICT (user_id, day, project_id, api_key_id, lane, provider, model, byok, currency) DO UPDATE SET
     requests = usage_daily.requests + excluded.requests,
     errors = usage_daily.errors + excluded.errors,
     estimated = usage_daily.estimated + excluded.estimated,
     prompt_tokens = usage_daily.prompt_tokens + excluded.prompt_tokens,
     completion_tokens = usage_daily.completion_tokens + excluded.completion_tokens,
     cached_tokens = usage_daily.cached_tokens + excluded.cached_tokens,
     total_tokens = usage_daily.total_tokens + excluded.total_tokens,
     cost_micros = usage_daily.cost_micros + excluded.cost_micros
 )
 SELECT count(*)::int AS inserted FROM ins`;

/**
 * Writes ledger records, each at most once, and adds the rows actually
 * inserted to their daily sums, in one statement (so one transaction): a
 * replayed batch (a worker killed after the commit, before its XACK) inserts
 * nothing and adds nothing. Every row carries the writing transaction's id,
 * which the feed's cursor needs. Values are bound parameters, never SQL.
 * Returns how many rows were new.
 */
export async function insertLedgerRecords(
  prisma: PrismaClient,
  records: readonly LedgerRecord[],
): Promise<number> {
  if (records.length === 0) return 0;
  // One array per column, unnested in the statement: 20 parameters and one
  // statement text whatever the batch size, instead of 20 per record (a
  // 500-record batch bound 10,000 parameters, each its own allocation in
  // Prisma and the driver, and every batch size was a new statement to parse).
  const columns: unknown[][] = RECORD_COLUMNS.map(() => new Array(records.length));
  records.forEach((r, row) => {
    valuesOf(r).forEach((v, col) => {
      (columns[col] as unknown[])[row] = storable(v);
    });
  });
  const [result] = await prisma.$queryRawUnsafe<{ inserted: number }[]>(INSERT_LEDGER_SQL, ...columns);
  return Number(result?.inserted ?? 0);
}

type SummaryRow = {
  project_id: string;
  day: string;
  lane: string;
  provider: string;
  model: string;
  api_key_id: string;
  byok: boolean;
  currency: string;
  requests: bigint | number;
  errors: bigint | number;
  prompt_tokens: bigint | number;
  completion_tokens: bigint | number;
  cached_tokens: bigint | number;
  total_tokens: bigint | number;
  cost_micros: bigint | number;
};

const orNull = (s: string) => (s === '' ? null : s);

/**
 * Usage of one user per project and UTC day in [from, to] (inclusive days),
 * from the daily sums (never the raw records), ordered by day then project,
 * each split by lane and model (most tokens first) and by API key. Errors
 * are requests answered with 4xx/5xx (499: the client went away).
 */
export async function summariseUsage(
  prisma: PrismaClient,
  query: { userId: string; from: string; to: string; projectId?: string | undefined; currency: string },
): Promise<UsageRow[]> {
  // Stored as written by insertLedgerRecords (NUL as U+FFFD), so the filter finds it.
  const projectId = (storable(query.projectId) as string | undefined) ?? null;
  const rows = await prisma.$queryRaw<SummaryRow[]>`
    SELECT project_id, to_char(day, 'YYYY-MM-DD') AS day, lane, provider, model, api_key_id, byok, currency,
           requests, errors, prompt_tokens, completion_tokens, cached_tokens, total_tokens, cost_micros
      FROM usage_daily
     WHERE user_id = ${query.userId}::uuid
       AND day >= ${query.from}::date
       AND day <= ${query.to}::date
       AND (${projectId}::text IS NULL OR project_id = ${projectId}::text)
     ORDER BY day, project_id, total_tokens DESC, lane, model`;
  const byProjectDay = new Map<string, UsageRow>();
  for (const r of rows) {
    const key = `${r.day}\n${r.project_id}`;
    let row = byProjectDay.get(key);
    if (!row) {
      row = {
        project_id: r.project_id,
        day: r.day,
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cached_tokens: 0,
        total_tokens: 0,
        errors: 0,
        cost_micros: 0,
        byok_cost_micros: 0,
        currency: query.currency,
        models: [],
        keys: [],
      };
      byProjectDay.set(key, row);
    }
    const requests = Number(r.requests);
    const totalTokens = Number(r.total_tokens);
    const cost = Number(r.cost_micros);
    row.requests += requests;
    row.prompt_tokens += Number(r.prompt_tokens);
    row.completion_tokens += Number(r.completion_tokens);
    row.cached_tokens += Number(r.cached_tokens);
    row.total_tokens += totalTokens;
    row.errors += Number(r.errors);
    row.cost_micros += cost;
    if (r.byok) row.byok_cost_micros += cost;
    const lane = orNull(r.lane);
    const model = orNull(r.model);
    const m = row.models.find((x) => x.lane === lane && x.model === model);
    if (m) {
      m.requests += requests;
      m.total_tokens += totalTokens;
      m.cost_micros += cost;
    } else
      row.models.push({
        lane,
        model,
        provider: orNull(r.provider),
        requests,
        total_tokens: totalTokens,
        cost_micros: cost,
      });
    const apiKeyId = orNull(r.api_key_id);
    const k = row.keys.find((x) => x.api_key_id === apiKeyId);
    if (k) {
      k.requests += requests;
      k.total_tokens += totalTokens;
      k.cost_micros += cost;
    } else row.keys.push({ api_key_id: apiKeyId, requests, total_tokens: totalTokens, cost_micros: cost });
  }
  // Map iteration keeps insertion order, which is the query's day-then-project order.
  const out = [...byProjectDay.values()];
  for (const row of out) {
    row.models.sort((a, b) => b.total_tokens - a.total_tokens);
    row.keys.sort((a, b) => b.total_tokens - a.total_tokens);
  }
  return out;
}
