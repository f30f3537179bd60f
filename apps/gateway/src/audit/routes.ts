import { AppError } from '@platform/errors';
import { type RequestHandler, Router } from 'express';
import { z } from 'zod';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import { type AuditEventRow, listAuditEvents } from './repo';

const ZListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z
    .string()
    .regex(/^\d{1,19}$/)
    .optional(),
});
const ZExportQuery = z.strictObject({
  format: z.enum(['ndjson', 'csv']).default('ndjson'),
  since: z.iso.datetime().optional(),
});

/** Most events one export carries (newest first); older ones: `since` or paging the list. */
const EXPORT_MAX = 100_000;
const EXPORT_PAGE = 1000;

export type AuditEventView = {
  id: string;
  at: string;
  actor_user_id: string | null;
  actor_kind: string;
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
  before: unknown;
  after: unknown;
};

function view(r: AuditEventRow): AuditEventView {
  return {
    id: r.id.toString(),
    at: r.at.toISOString(),
    actor_user_id: r.actorUserId,
    actor_kind: r.actorKind,
    action: r.action,
    target: r.target,
    ip: r.ip,
    user_agent: r.userAgent,
    before: r.before ?? null,
    after: r.after ?? null,
  };
}

const CSV_COLUMNS = [
  'id',
  'at',
  'actor_user_id',
  'actor_kind',
  'action',
  'target',
  'ip',
  'user_agent',
  'before',
  'after',
] as const;

/** One CSV field: quoted, quotes doubled; objects as JSON. A leading =+-@ is prefixed with ' (spreadsheet formulas). */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replaceAll('"', '""')}"`;
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AppError('validation_failed', {
    details: parsed.error.issues.map((i) => ({ path: i.path.join('.') || 'query', message: i.message })),
  });
}

/**
 * `GET /api/v1/audit`: the caller's audit log, newest first, paged by
 * `before` (an event id). `GET /api/v1/audit/export`: the whole log (up to
 * 100,000 events, `since` to narrow) as NDJSON or CSV, as a download.
 */
export function createAuditRouter(opts: { prisma: PrismaClient; auth: RequestHandler }): Router {
  const router = Router();
  router.get('/api/v1/audit', opts.auth, async (req, res) => {
    const q = parse(ZListQuery, req.query);
    const rows = await listAuditEvents(opts.prisma, {
      ownerUserId: requireAuthOf(res).userId,
      beforeId: q.before !== undefined ? BigInt(q.before) : undefined,
      limit: q.limit,
    });
    const last = rows.at(-1);
    res.json({
      events: rows.map(view),
      next_before: rows.length === q.limit && last ? last.id.toString() : null,
    });
  });
  router.get('/api/v1/audit/export', opts.auth, async (req, res) => {
    const q = parse(ZExportQuery, req.query);
    const ownerUserId = requireAuthOf(res).userId;
    const since = q.since ? new Date(q.since) : undefined;
    const csv = q.format === 'csv';
    res.setHeader('Content-Type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    res.setHeader('Content-Disposition', `attachment; filename="audit.${csv ? 'csv' : 'ndjson'}"`);
    const lines: string[] = csv ? [CSV_COLUMNS.join(',')] : [];
    let beforeId: bigint | undefined;
    for (let sent = 0; sent < EXPORT_MAX; sent += EXPORT_PAGE) {
      const rows = await listAuditEvents(opts.prisma, { ownerUserId, beforeId, limit: EXPORT_PAGE, since });
      for (const r of rows) {
        const v = view(r);
        lines.push(csv ? CSV_COLUMNS.map((c) => csvField(v[c])).join(',') : JSON.stringify(v));
      }
      if (rows.length < EXPORT_PAGE) break;
      beforeId = rows.at(-1)?.id;
    }
    res.send(lines.length > 0 ? `${lines.join('\n')}\n` : '');
  });
  return router;
}
