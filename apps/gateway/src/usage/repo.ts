import type { UsageRow } from '@platform/contract';
import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { LedgerRecord } from './record';

/** Text Postgres cannot hold: a NUL, or a lone UTF-16 surrogate (no UTF-8 form). */
function unstorable(value: string): boolean {
  return value.includes('\u0000') || !value.isWellFormed();
}

/**
 * Text Postgres can hold: NUL and lone surrogates as U+FFFD. The routes
 * refuse such text at the edge (@platform/contract ZStorableText); this
 * keeps a record that got past them (an older version's, one written to the
 * stream by hand) insertable, rather than parked, because it is money.
 */
export function storable(value: unknown): unknown {
  return typeof value === 'string' && unstorable(value)
    ? value.toWellFormed().replaceAll('\u0000', '\ufffd')
    : value;
}

const TEXT_FIELDS = ['projectId', 'endpoint', 'lane', 'provider', 'model', 'currency'] as const;

/** A record whose text Postgres can hold (see storable); the same object when nothing needed changing. */
function storableRecord(r: LedgerRecord): LedgerRecord {
  if (!TEXT_FIELDS.some((k) => typeof r[k] === 'string' && unstorable(r[k] as string))) return r;
  const out: Record<string, unknown> = { ...r };
  for (const k of TEXT_FIELDS) out[k] = storable(out[k]);
  return out as LedgerRecord;
}

/** A failed upstream attempt the provider may bill, as usage_attempts keeps it. */
export type UsageAttemptRow = {
  requestId: string;
  userId: string;
  apiKeyId: string | null;
  projectId: string;
  endpoint: string;
  provider: string;
  model: string;
  outcome: string;
  status: number | null;
  byok: boolean;
  latencyMs: number;
};

/** Keeps failed attempts for an operator: not in the daily sums, not in the feed, never charged. */
export async function insertUsageAttempts(
  prisma: PrismaClient,
  rows: readonly UsageAttemptRow[],
): Promise<void> {
  await prisma.usageAttempt.createMany({
    data: rows.map((r) => ({ ...r, projectId: String(storable(r.projectId)) })),
  });
}

/** A ledger record (or stream entry) Postgres refused, as `usage_parked` keeps it. */
export type ParkedRecord = { entryId: string; payload: string; reason: string };

/**
 * Parks refused records for an operator (docs/usage-and-budgets.md, Edges).
 * The payload is JSON text, which escapes NUL and lone surrogates, so any
 * record fits.
 */
export async function parkLedgerRecords(prisma: PrismaClient, rows: readonly ParkedRecord[]): Promise<void> {
  await prisma.usageParked.createMany({
    data: rows.map((r) => ({ entryId: r.entryId, payload: r.payload, reason: String(storable(r.reason)) })),
  });
}

/**
 * A count column's value: rounded (a provider's fractional count is stored
 * rounded, never refused); NULL when negative, which the NOT NULL column then
 * refuses, so a batch with one is written record by record after the checks
 * of ledger-redis-stream.ts (which skip it).
 */
const count = (field: string, type: 'int' | 'bigint' = 'int') =>
  `CASE WHEN r."${field}" >= 0 THEN round(r."${field}")::${type} END`;

/**
 * The one statement of the ledger's inserts: the records of a JSON array
 * (LedgerRecord objects, as the ledger stream holds them), each inserted at
 * most once, and their daily sums (only of rows actually inserted).
 */
const INSERT_LEDGER_SQL = `WITH ins AS (
   INSERT INTO usage_records (request_id, client_request_id, user_id, api_key_id, project_id, endpoint, lane, provider, model,
                              status, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens,
                              total_tokens, cost_micros, currency, estimated, byok, continued, latency_ms, created_at, xid)
   SELECT r."requestId", r."clientRequestId", r."userId", r."apiKeyId", r."projectId", r.endpoint, r.lane, r.provider, r.model,
          ${count('status')}, ${count('promptTokens')}, ${count('completionTokens')}, ${count('cachedTokens')},
          CASE WHEN r."cacheWriteTokens" IS NULL THEN 0 ELSE ${count('cacheWriteTokens')} END,
          ${count('totalTokens')}, round(r."costMicros")::bigint, r.currency, r.estimated, r.byok,
          coalesce(r.continued, false), greatest(0, round(r."latencyMs"))::int, to_timestamp((r."createdAt" / 1000)::float8),
          pg_current_xact_id()::text::bigint
     FROM json_to_recordset($1::json) AS r(
            "requestId" uuid, "clientRequestId" uuid, "userId" uuid, "apiKeyId" uuid, "projectId" text, endpoint text, lane text,
            provider text, model text, status numeric, "promptTokens" numeric, "completionTokens" numeric,
            "cachedTokens" numeric, "cacheWriteTokens" numeric, "totalTokens" numeric, "costMicros" numeric,
            currency text, estimated boolean, byok boolean, continued boolean, "latencyMs" numeric, "createdAt" numeric)
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
 * Writes ledger records given as the text of a JSON array of LedgerRecord
 * objects, each at most once, and adds the rows actually inserted to their
 * daily sums, in one statement (so one transaction): a replayed batch (a
 * worker killed after the commit, before its XACK) inserts nothing and adds
 * nothing. Every row carries the writing transaction's id, which the feed's
 * cursor needs. The text is one bound parameter, parsed by Postgres: the
 * drain hands over the stream's entries as they are, without parsing them or
 * binding a value per field (that binding was ~9 % of the gateway's CPU per
 * chat request; docs/performance.md). As `json`, not `jsonb`:
 * json_to_recordset reads the text once, about twice as fast for these
 * records as building jsonb first (4.6 against 8.4 µs per record, measured
 * here). Postgres refuses the whole array when
 * one record does not fit (a missing field, a negative count, a NUL in a
 * text, an id that is no UUID). Returns how many rows were new.
 */
export async function insertLedgerJson(sql: RawSql, json: string): Promise<number> {
  const [result] = await sql.query<{ inserted: number }>(INSERT_LEDGER_SQL, [json]);
  return Number(result?.inserted ?? 0);
}

/** insertLedgerJson of records in hand, their text made storable (NUL as U+FFFD). */
export async function insertLedgerRecords(sql: RawSql, records: readonly LedgerRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  return insertLedgerJson(sql, JSON.stringify(records.map(storableRecord)));
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
