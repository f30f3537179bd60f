import {
  type UsageFeedResponse,
  type UsageResponse,
  usageRange,
  ZServiceUsageFeedQuery,
  ZUsageFeedQuery,
  ZUsageQuery,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { type Clock, parseRequestPart, systemClock } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import { decodeCursor, encodeCursor, type FeedPosition, readFeed } from './feed-repo';
import { summariseUsage } from './repo';

// Rows migrated from before the ledger have xid 0 and ids from 1.
const START: FeedPosition = { xid: 0n, seq: 0n };

async function feedPage(
  sql: RawSql,
  query: { cursor?: string | undefined; limit: number },
  userId: string | undefined,
): Promise<UsageFeedResponse> {
  const after = query.cursor === undefined ? START : decodeCursor(query.cursor);
  if (!after)
    throw new AppError('validation_failed', {
      details: [{ path: 'cursor', message: 'not a cursor of this feed' }],
    });
  const { rows, last } = await readFeed(sql, { after, limit: query.limit, userId });
  const next = last ?? after;
  return { records: rows, next_cursor: encodeCursor(next), has_more: rows.length === query.limit };
}

/**
 * `GET /api/v1/usage?from&to[&project_id]`: the caller's usage and cost per
 * project and UTC day, from the daily sums (a record appears about a second
 * after its request, once the ledger drained it into Postgres); without
 * from/to the last 30 days.
 * `GET /api/v1/usage/records`: the caller's ledger records (cursor).
 * `GET /api/v1/usage/feed`: every user's records, with the service token.
 */
export function createUsageRouter(opts: {
  prisma: PrismaClient;
  /** The pool's raw SQL (the feed: feed-repo.ts). */
  sql: RawSql;
  auth: RequestHandler;
  service: RequestHandler;
  currency: string;
  clock?: Clock;
}): Router {
  const router = Router();
  router.get('/api/v1/usage', opts.auth, async (req, res) => {
    const asked = parseRequestPart(ZUsageQuery, req.query);
    // Defaults filled in, then checked again (a lone `from` may be too far back).
    const query = parseRequestPart(ZUsageQuery, {
      ...asked,
      ...usageRange(asked, (opts.clock ?? systemClock)()),
    });
    const usage = await summariseUsage(opts.prisma, {
      userId: requireAuthOf(res).userId,
      from: query.from as string,
      to: query.to as string,
      projectId: query.project_id,
      currency: opts.currency,
    });
    res.json({ usage } satisfies UsageResponse);
  });
  router.get('/api/v1/usage/records', opts.auth, async (req, res) => {
    const query = parseRequestPart(ZUsageFeedQuery, req.query);
    res.json(await feedPage(opts.sql, query, requireAuthOf(res).userId));
  });
  router.get('/api/v1/usage/feed', opts.service, async (req, res) => {
    const query = parseRequestPart(ZServiceUsageFeedQuery, req.query);
    res.json(await feedPage(opts.sql, query, query.user_id));
  });
  return router;
}
