import type { RawSql } from '../batching/raw-sql';

/** One ledger record as the feed returns it (snake_case, as on the wire). */
export type FeedRow = {
  id: string;
  client_request_id: string | null;
  user_id: string;
  api_key_id: string | null;
  project_id: string;
  endpoint: string;
  lane: string | null;
  provider: string | null;
  model: string | null;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  cost_micros: number;
  currency: string;
  estimated: boolean;
  byok: boolean;
  created_at: string;
};

/**
 * The id below which no transaction that could still write a usage row is
 * running: the oldest transaction in progress in this statement's snapshot
 * (or, with none, the snapshot's next id), leaving out those that
 * pg_stat_activity shows in another database of the cluster (they cannot
 * write this table). An in-progress one that ended between the snapshot and
 * the read of pg_stat_activity is kept: the bound only gets lower, never
 * unsafe. Without that exclusion one long transaction anywhere in the
 * cluster (a bulk load in another database) would stop the feed.
 */
const STABLE_BOUND = `
  SELECT coalesce(min(x::text::bigint), pg_snapshot_xmax(pg_current_snapshot())::text::bigint)
    FROM pg_snapshot_xip(pg_current_snapshot()) AS x
   WHERE x::xid NOT IN (SELECT backend_xid FROM pg_stat_activity
                         WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database())`;

/** A position in the feed: after the row (xid, seq). */
export type FeedPosition = { xid: bigint; seq: bigint };

type RawRow = Omit<FeedRow, 'cost_micros' | 'created_at'> & {
  cost_micros: bigint | number | string;
  created_at: Date;
  xid: bigint | string;
  seq: bigint | string;
};

/**
 * Ledger records after `after`, in (writing transaction id, row id) order,
 * only of transactions older than STABLE_BOUND. Why it is safe to page
 * through: every transaction below that bound that could write here has
 * ended, and any later one gets a larger id, so no row can ever appear
 * before a position already returned (a plain serial or created_at cursor
 * would skip rows that concurrent writers commit out of order). The price:
 * the feed lags behind the longest running writing transaction of this
 * database.
 */
export async function readFeed(
  sql: RawSql,
  query: { after: FeedPosition; limit: number; userId?: string | undefined },
): Promise<{ rows: FeedRow[]; last: FeedPosition | null }> {
  // Raw SQL on the pool, not Prisma: the billing shipper polls this in every
  // worker, and a worker's first Prisma query loads its query compiler
  // (~8-9 MB; docs/performance.md, issue 46).
  const columns = `
    SELECT request_id::text AS id, client_request_id::text AS client_request_id, user_id::text AS user_id, api_key_id::text AS api_key_id, project_id,
           endpoint, lane, provider, model, status, prompt_tokens, completion_tokens, cached_tokens,
           cache_write_tokens, total_tokens, cost_micros, currency, estimated, byok, created_at, xid::text AS xid, id::text AS seq
      FROM usage_records`;
  const after = `(xid, id) > ($1::bigint, $2::bigint)
       AND xid < (${STABLE_BOUND})`;
  // ORDER BY names the table's columns: bare `xid, id` would sort by the
  // output columns of those names (xid as text, id = request_id), which put a
  // batch's rows in random order and lost rows across pages.
  // Two statements rather than `($user IS NULL OR user_id = $user)`, which keeps
  // the planner from the (xid, id) index. The limit is written into the SQL (an
  // integer, clamped here): a generic plan for `LIMIT $n` assumes a tenth of the
  // table and may prefer a full scan and sort.
  const limit = String(Math.min(1000, Math.max(1, Math.trunc(query.limit))));
  const position = [String(query.after.xid), String(query.after.seq)];
  const raw = query.userId
    ? await sql.query<RawRow>(
        `${columns} WHERE user_id = $3::uuid AND ${after}
          ORDER BY usage_records.xid, usage_records.id LIMIT ${limit}`,
        [...position, query.userId],
      )
    : await sql.query<RawRow>(
        `${columns} WHERE ${after}
          ORDER BY usage_records.xid, usage_records.id LIMIT ${limit}`,
        position,
      );
  const rows = raw.map(({ xid: _x, seq: _s, ...r }) => ({
    ...r,
    cost_micros: Number(r.cost_micros),
    created_at: new Date(r.created_at).toISOString(),
  }));
  const tail = raw.at(-1);
  return { rows, last: tail ? { xid: BigInt(tail.xid), seq: BigInt(tail.seq) } : null };
}

/** Opaque cursor text of a position. */
export function encodeCursor(p: FeedPosition): string {
  return Buffer.from(`${p.xid}.${p.seq}`).toString('base64url');
}

const CURSOR = /^(\d{1,20})\.(\d{1,20})$/;

/** The position of a cursor, or null when it is not one of ours. */
export function decodeCursor(cursor: string): FeedPosition | null {
  const m = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m?.[1] || !m[2]) return null;
  return { xid: BigInt(m[1]), seq: BigInt(m[2]) };
}

/**
 * Deletes raw records older than `before`, at most `batch` rows per
 * statement, oldest first; the daily sums stay. One worker at a time (a
 * transaction-scoped advisory lock; the others skip). Returns rows deleted.
 */
export async function deleteExpiredRecords(sql: RawSql, before: Date, batch: number): Promise<number> {
  return sql.execute(
    `WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtext('usage_records_retention')) AS got)
     DELETE FROM usage_records
      WHERE (SELECT got FROM lock)
        AND id IN (SELECT id FROM usage_records WHERE created_at < $1::timestamptz ORDER BY created_at LIMIT $2::int)`,
    [before.toISOString(), batch],
  );
}
