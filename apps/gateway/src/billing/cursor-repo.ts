import type { PrismaClient } from '../generated/prisma/client';
import type { CursorStore, FeedPosition } from './shipper';

type Row = { xid: bigint | string; seq: bigint | string };

/**
 * The shipper's cursor in `billing_cursors` (one row per shipper name), with
 * a lease on the same row: `acquire` takes it when free, expired or already
 * ours; `advance` writes only while we hold it (the fence: a process that was
 * paused past its lease cannot move the cursor of the one that took over).
 * Times are the database's clock, so the processes' clocks do not matter.
 */
export function createCursorStore(prisma: PrismaClient, name: string): CursorStore {
  const toPosition = (row: Row | undefined): FeedPosition | null =>
    row ? { xid: BigInt(row.xid), seq: BigInt(row.seq) } : null;
  return {
    async acquire(owner, leaseMs) {
      const rows = await prisma.$queryRaw<Row[]>`
        INSERT INTO billing_cursors (name, xid, seq, lease_owner, lease_until)
        VALUES (${name}, 0, 0, ${owner}, now() + ${leaseMs} * interval '1 millisecond')
        ON CONFLICT (name) DO UPDATE
           SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
         WHERE billing_cursors.lease_owner = EXCLUDED.lease_owner
            OR billing_cursors.lease_owner IS NULL
            OR billing_cursors.lease_until < now()
        RETURNING xid::text AS xid, seq::text AS seq`;
      return toPosition(rows[0]);
    },
    async advance(owner, to, leaseMs) {
      const n = await prisma.$executeRaw`
        UPDATE billing_cursors
           SET xid = ${to.xid}::bigint, seq = ${to.seq}::bigint, updated_at = now(),
               lease_until = now() + ${leaseMs} * interval '1 millisecond'
         WHERE name = ${name} AND lease_owner = ${owner}`;
      return n === 1;
    },
    async release(owner) {
      await prisma.$executeRaw`
        UPDATE billing_cursors SET lease_owner = NULL, lease_until = NULL
         WHERE name = ${name} AND lease_owner = ${owner}`;
    },
  };
}
