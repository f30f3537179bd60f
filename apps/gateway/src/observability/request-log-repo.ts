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

export async function insertRequestLog(prisma: PrismaClient, rows: RequestLogRow[]): Promise<void> {
  await prisma.$executeRawUnsafe(INSERT_REQUEST_LOG_SQL, JSON.stringify(rows));
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

/** Deletes at most `limit` rows older than `before`; returns how many. */
export async function deleteExpiredRequestLog(
  prisma: PrismaClient,
  before: Date,
  limit: number,
): Promise<number> {
  return prisma.$executeRaw`
    DELETE FROM request_log WHERE request_id IN (
      SELECT request_id FROM request_log WHERE created_at < ${before} LIMIT ${limit}
    )`;
}
