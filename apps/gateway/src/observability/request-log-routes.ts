import {
  type RequestLogDetail,
  type RequestLogEntry,
  type RequestLogQuery,
  type RequestLogResponse,
  ZRequestLogQuery,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import { isTeamSubject } from './project-settings-repo';
import {
  findRequestLog,
  type RequestLogFilter,
  type RequestLogRow,
  searchRequestLog,
} from './request-log-repo';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a path's id can be a request id (anything else is 404, as an unknown one). */
export function isRequestId(id: unknown): id is string {
  return typeof id === 'string' && UUID.test(id);
}

export function toEntry(row: RequestLogRow): RequestLogEntry {
  return {
    request_id: row.requestId,
    created_at: row.createdAt.toISOString(),
    key_id: row.apiKeyId,
    project_id: row.projectId,
    endpoint: row.endpoint,
    lane: row.lane,
    provider: row.provider,
    model: row.model,
    status: row.status,
    error: row.error,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    cached_tokens: row.cachedTokens,
    cost_micros: row.costMicros,
    currency: row.currency,
    latency_ms: row.latencyMs,
    ttft_ms: row.ttftMs,
    user_agent: row.userAgent,
    attempts: row.attempts,
  };
}

/** `<created_at ms>.<request id>` of a page's last row: the next page starts below it. */
export function encodeCursor(row: RequestLogRow): string {
  return `${row.createdAt.getTime()}.${row.requestId}`;
}

function decodeCursor(cursor: string): { createdAt: Date; requestId: string } {
  const dot = cursor.indexOf('.');
  const ms = Number(cursor.slice(0, dot));
  const requestId = cursor.slice(dot + 1);
  if (dot <= 0 || !Number.isSafeInteger(ms) || !UUID.test(requestId))
    throw new AppError('validation_failed', {
      details: [{ path: 'cursor', message: 'not a cursor of this log' }],
    });
  return { createdAt: new Date(ms), requestId };
}

/** One request as the detail view shows it; `readContent` false hides what was captured. */
export function toDetail(row: RequestLogRow, readContent: boolean): RequestLogDetail {
  const captured = row.prompt != null || row.answer != null;
  return {
    ...toEntry(row),
    content: readContent && captured ? { prompt: row.prompt ?? null, answer: row.answer ?? null } : null,
  };
}

export function filterOf(userId: string, q: RequestLogQuery): RequestLogFilter {
  return {
    userId,
    from: q.from ? new Date(q.from) : undefined,
    to: q.to ? new Date(q.to) : undefined,
    apiKeyId: q.key_id,
    projectId: q.project_id,
    model: q.model,
    status: typeof q.status === 'number' ? q.status : undefined,
    failed: q.status === 'failed',
    minCostMicros: q.min_cost_micros,
    minLatencyMs: q.min_latency_ms,
    before: q.cursor ? decodeCursor(q.cursor) : undefined,
    limit: q.limit,
  };
}

/**
 * `GET /api/v1/request-log`: the caller's AI requests, newest first, with
 * filters (ZRequestLogQuery) and a cursor. `GET /api/v1/request-log/{id}`:
 * one of them with its attempts and, for the project's owner, its captured
 * prompt and answer; 404 for another user's or an unknown id.
 */
export function createRequestLogRouter(opts: { prisma: PrismaClient; auth: RequestHandler }): Router {
  const router = Router();
  router.get('/api/v1/request-log', opts.auth, async (req, res) => {
    const query = parseRequestPart(ZRequestLogQuery, req.query);
    const rows = await searchRequestLog(opts.prisma, filterOf(requireAuthOf(res).userId, query));
    const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
    res.json({
      requests: rows.map(toEntry),
      next_cursor: last ? encodeCursor(last) : null,
    } satisfies RequestLogResponse);
  });
  router.get('/api/v1/request-log/:id', opts.auth, async (req, res) => {
    const id = req.params.id;
    if (!isRequestId(id)) throw new AppError('not_found');
    const userId = requireAuthOf(res).userId;
    const row = await findRequestLog(opts.prisma, userId, id.toLowerCase());
    if (!row) throw new AppError('not_found');
    // Captured text is for the project's owner: a team's own key (its billing subject) never reads it.
    const captured = row.prompt != null || row.answer != null;
    const readContent = captured && !(await isTeamSubject(opts.prisma, userId));
    res.json(toDetail(row, readContent));
  });
  return router;
}
