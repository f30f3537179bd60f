import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { LoggedAttempt } from './attempt-log';

/** A row of `request_log` as written and read. */
export type RequestLogRow = {
  requestId: string;
  userId: string;
  apiKeyId: string | null;
  projectId: string;
  endpoint: string;
  lane: string | null;
  provider: string | null;
  model: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costMicros: number;
  currency: string;
  latencyMs: number;
  ttftMs: number | null;
  userAgent: string | null;
  error: string | null;
  attempts: LoggedAttempt[];
  /** Captured, redacted and cut prompt (observability/capture.ts); null or absent: none. */
  prompt?: string | null | undefined;
  answer?: string | null | undefined;
  createdAt: Date;
};

/**
 * The batch as one JSON array parsed by Postgres (json_to_recordset), as the
 * ledger writes: one bound parameter, no per-row binding and no query
 * compilation in the gateway (Prisma's createMany cost ~2x the CPU of a
 * whole chat request in the bench). The rows are serialised as they are
 * (`createdAt` as its ISO text); Postgres rounds the times and keeps them
 * non-negative, so the gateway copies no row. A request already logged (a
 * replay) is left as it is.
 */
const INSERT_REQUEST_LOG_SQL = `INSERT INTO request_log (request_id, user_id, api_key_id, project_id, endpoint, lane,
    provider, model, status, prompt_tokens, completion_tokens, cached_tokens, cost_micros, currency, latency_ms,
    ttft_ms, user_agent, error, attempts, prompt, answer, created_at)
  SELECT r."requestId", r."userId", r."apiKeyId", r."projectId", r.endpoint, r.lane, r.provider, r.model, r.status,
         r."promptTokens", r."completionTokens", r."cachedTokens", round(r."costMicros")::bigint, r.currency,
         greatest(0, round(r."latencyMs"))::int,
         CASE WHEN r."ttftMs" IS NULL THEN NULL ELSE greatest(0, round(r."ttftMs"))::int END, r."userAgent", r.error,
         coalesce(r.attempts, '[]'::json), r.prompt, r.answer, r."createdAt"
    FROM json_to_recordset($1::json) AS r("requestId" uuid, "userId" uuid, "apiKeyId" uuid, "projectId" text,
         endpoint text, lane text, provider text, model text, status int, "promptTokens" int,
         "completionTokens" int, "cachedTokens" int, "costMicros" numeric, currency text, "latencyMs" numeric,
         "ttftMs" numeric, "userAgent" text, error text, attempts json, prompt text, answer text,
         "createdAt" timestamptz)
  ON CONFLICT (request_id) DO NOTHING`;

/**
 * The fast path: the same rows as COPY's text format, which Postgres parses
 * about three times cheaper than the JSON array (6 against 17 µs of backend
 * CPU per row, measured with this table's indexes: docs/performance.md,
 * session 15). COPY has no ON CONFLICT: a replayed row (a retried batch whose
 * first try committed) fails the whole COPY, and the JSON statement above then
 * writes the batch, skipping what is there. Values are converted as that
 * statement converts them (rounded, latency kept non-negative).
 */
const COPY_REQUEST_LOG_SQL = `COPY request_log (request_id, user_id, api_key_id, project_id, endpoint, lane, provider,
    model, status, prompt_tokens, completion_tokens, cached_tokens, cost_micros, currency, latency_ms, ttft_ms,
    user_agent, error, attempts, prompt, answer, created_at) FROM STDIN`;

const BACKSLASH = 0x5c;
const TAB = 0x09;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const NUL = 0x00;
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;

/**
 * A text field of COPY's text format: backslash, tab, newline and carriage
 * return escaped; NUL (which Postgres text cannot hold) as U+FFFD, as the
 * ledger stores it. One pass; the common text with none of them is returned
 * as it is.
 */
export function copyText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  // One character class, no quantifier: a linear scan in V8's native code, and most text has none.
  if (!NEEDS_ESCAPE.test(value)) return value;
  let out = '';
  let copied = 0;
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    if (c > BACKSLASH || (c !== BACKSLASH && c !== TAB && c !== NEWLINE && c !== RETURN && c !== NUL))
      continue;
    out += value.slice(copied, i);
    out +=
      c === BACKSLASH ? '\\\\' : c === TAB ? '\\t' : c === NEWLINE ? '\\n' : c === RETURN ? '\\r' : '\uFFFD';
    copied = i + 1;
  }
  return copied === 0 ? value : out + value.slice(copied);
}

const whole = (n: number) => String(Math.round(n));
const duration = (n: number) => String(Math.max(0, Math.round(n)));

/** The rows as the body of COPY_REQUEST_LOG_SQL. */
export function requestLogCopyText(rows: readonly RequestLogRow[]): string {
  let text = '';
  for (const r of rows) {
    text += `${copyText(r.requestId)}\t${copyText(r.userId)}\t${copyText(r.apiKeyId)}\t${copyText(r.projectId)}\t${copyText(r.endpoint)}\t${copyText(r.lane)}\t${copyText(r.provider)}\t${copyText(r.model)}\t${whole(r.status)}\t${whole(r.promptTokens)}\t${whole(r.completionTokens)}\t${whole(r.cachedTokens)}\t${whole(r.costMicros)}\t${copyText(r.currency)}\t${duration(r.latencyMs)}\t${r.ttftMs === null ? '\\N' : duration(r.ttftMs)}\t${copyText(r.userAgent)}\t${copyText(r.error)}\t${copyText(JSON.stringify(r.attempts))}\t${copyText(r.prompt)}\t${copyText(r.answer)}\t${r.createdAt.toISOString()}\n`;
  }
  return text;
}

/**
 * Writes the rows by COPY, else by the JSON statement. `onCopyRefused` hears
 * each COPY that failed: a replayed batch now and then is expected, one on
 * every batch (a schema that COPY no longer fits) doubles each write's work
 * and must not go unseen.
 */
export async function insertRequestLog(
  sql: RawSql,
  rows: RequestLogRow[],
  onCopyRefused?: (err: unknown) => void,
): Promise<void> {
  if (sql.copyFrom) {
    try {
      await sql.copyFrom(COPY_REQUEST_LOG_SQL, requestLogCopyText(rows));
      return;
    } catch (err) {
      // A replayed row, or a value COPY refuses: the JSON statement decides (and
      // fails as before if Postgres is down).
      onCopyRefused?.(err);
    }
  }
  await sql.query(INSERT_REQUEST_LOG_SQL, [JSON.stringify(rows)]);
}

/** The filters of a search; all optional but the user. */
export type RequestLogFilter = {
  userId: string;
  from?: Date | undefined;
  to?: Date | undefined;
  apiKeyId?: string | undefined;
  projectId?: string | undefined;
  model?: string | undefined;
  status?: number | undefined;
  /** true: only requests answered with a status of 400 or more. */
  failed?: boolean | undefined;
  minCostMicros?: number | undefined;
  minLatencyMs?: number | undefined;
  /** Older than this (the previous page's last `createdAt`, with its id). */
  before?: { createdAt: Date; requestId: string } | undefined;
  limit: number;
};

function whereOf(f: RequestLogFilter) {
  return {
    userId: f.userId,
    ...(f.apiKeyId ? { apiKeyId: f.apiKeyId } : {}),
    ...(f.projectId ? { projectId: f.projectId } : {}),
    ...(f.model ? { model: f.model } : {}),
    ...(f.status !== undefined ? { status: f.status } : f.failed ? { status: { gte: 400 } } : {}),
    ...(f.minCostMicros !== undefined ? { costMicros: { gte: BigInt(f.minCostMicros) } } : {}),
    ...(f.minLatencyMs !== undefined ? { latencyMs: { gte: f.minLatencyMs } } : {}),
    AND: [
      ...(f.from ? [{ createdAt: { gte: f.from } }] : []),
      ...(f.to ? [{ createdAt: { lt: f.to } }] : []),
      ...(f.before
        ? [
            {
              OR: [
                { createdAt: { lt: f.before.createdAt } },
                { createdAt: f.before.createdAt, requestId: { lt: f.before.requestId } },
              ],
            },
          ]
        : []),
    ],
  };
}

type Stored = Omit<RequestLogRow, 'costMicros' | 'attempts' | 'prompt' | 'answer'> & {
  costMicros: bigint;
  attempts: unknown;
  prompt?: string | null;
  answer?: string | null;
};

function fromStored(row: Stored): RequestLogRow {
  return { ...row, costMicros: Number(row.costMicros), attempts: row.attempts as LoggedAttempt[] };
}

/** Newest first, at most `limit` rows; without captured content (the single-request view has it). */
export async function searchRequestLog(prisma: PrismaClient, f: RequestLogFilter): Promise<RequestLogRow[]> {
  const rows = await prisma.requestLogEntry.findMany({
    where: whereOf(f),
    omit: { prompt: true, answer: true },
    orderBy: [{ createdAt: 'desc' }, { requestId: 'desc' }],
    take: f.limit,
  });
  return rows.map(fromStored);
}

/** One request of the user, or null. */
export async function findRequestLog(
  prisma: PrismaClient,
  userId: string,
  requestId: string,
): Promise<RequestLogRow | null> {
  const row = await prisma.requestLogEntry.findFirst({ where: { userId, requestId } });
  return row ? fromStored(row) : null;
}

/** Deletes at most `limit` rows older than `before`; returns how many (raw SQL: hourly in every worker, off Prisma). */
export async function deleteExpiredRequestLog(sql: RawSql, before: Date, limit: number): Promise<number> {
  return sql.execute(
    `DELETE FROM request_log WHERE request_id IN (
       SELECT request_id FROM request_log WHERE created_at < $1::timestamptz LIMIT $2::int)`,
    [before.toISOString(), limit],
  );
}
