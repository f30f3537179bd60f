import type { RawSql } from '../batching/raw-sql';
import type { CursorStore, FeedPosition } from './shipper';

type Row = { xid: bigint | string; seq: bigint | string };

/**
 * The shipper's cursor in `billing_cursors` (one row per shipper name), with
 * a lease on the same row: `acquire` takes it when free, expired or already
 * ours; `advance` writes only while we hold it (the fence: a process that was
 * paused past its lease cannot move the cursor of the one that took over).
 * Times are the database's clock, so the processes' clocks do not matter.
 */
export function createCursorStore(sql: RawSql, name: string): CursorStore {
  // Raw SQL on the pool, not Prisma: every worker's shipper polls its lease, and a
  // worker's first Prisma query loads its query compiler (~8-9 MB; issue 46).
  const toPosition = (row: Row | undefined): FeedPosition | null =>
    row ? { xid: BigInt(row.xid), seq: BigInt(row.seq) } : null;
  return {
    async acquire(owner, leaseMs) {
      const rows = await sql.query<Row>(
        `INSERT INTO billing_cursors (name, xid, seq, lease_owner, lease_until)
         VALUES ($1, 0, 0, $2, now() + $3::int * interval '1 millisecond')
         ON CONFLICT (name) DO UPDATE
            SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
          WHERE billing_cursors.lease_owner = EXCLUDED.lease_owner
             OR billing_cursors.lease_owner IS NULL
             OR billing_cursors.lease_until < now()
         RETURNING xid::text AS xid, seq::text AS seq`,
        [name, owner, leaseMs],
      );
      return toPosition(rows[0]);
    },
    async advance(owner, to, leaseMs) {
      const n = await sql.execute(
        `UPDATE billing_cursors
            SET xid = $1::bigint, seq = $2::bigint, updated_at = now(),
                lease_until = now() + $3::int * interval '1 millisecond'
          WHERE name = $4 AND lease_owner = $5`,
        [String(to.xid), String(to.seq), leaseMs, name, owner],
      );
      return n === 1;
    },
    async release(owner) {
      await sql.execute(
        `UPDATE billing_cursors SET lease_owner = NULL, lease_until = NULL
          WHERE name = $1 AND lease_owner = $2`,
        [name, owner],
      );
    },
  };
}
