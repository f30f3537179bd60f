import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';

type Db = Pick<PrismaClient, 'auditEvent' | '$transaction' | '$executeRaw'>;

export type AuditEventRow = {
  id: bigint;
  at: Date;
  actorUserId: string | null;
  actorKind: string;
  action: string;
  target: string | null;
  ip: string | null;
  userAgent: string | null;
  before: unknown;
  after: unknown;
};

/** The owner's events, newest first, below `beforeId` when given. */
export async function listAuditEvents(
  prisma: Db,
  q: {
    ownerUserId?: string;
    teamId?: string;
    beforeId?: bigint | undefined;
    limit: number;
    since?: Date | undefined;
  },
): Promise<AuditEventRow[]> {
  return prisma.auditEvent.findMany({
    where: {
      ...(q.teamId !== undefined ? { teamId: q.teamId } : { ownerUserId: q.ownerUserId ?? '' }),
      ...(q.beforeId !== undefined ? { id: { lt: q.beforeId } } : {}),
      ...(q.since ? { at: { gte: q.since } } : {}),
    },
    orderBy: { id: 'desc' },
    take: q.limit,
    select: {
      id: true,
      at: true,
      actorUserId: true,
      actorKind: true,
      action: true,
      target: true,
      ip: true,
      userAgent: true,
      before: true,
      after: true,
    },
  });
}

/**
 * Deletes events older than `before`, at most `batch` of them: the one
 * DELETE the table's trigger lets through, as it runs with `audit.purge`
 * set for its own transaction (`set_config(..., true)`, in the statement's
 * one-time filter, evaluated before any row is deleted). One statement on
 * the pool's raw SQL, not Prisma: every worker runs it hourly, and a
 * worker's first Prisma query loads its query compiler (~8-9 MB; issue 46).
 */
export async function purgeAuditEvents(sql: RawSql, before: Date, batch: number): Promise<number> {
  return sql.execute(
    `DELETE FROM audit_events
      WHERE (SELECT set_config('audit.purge', 'on', true)) = 'on'
        AND id IN (SELECT id FROM audit_events WHERE at < $1::timestamptz ORDER BY id LIMIT $2::int)`,
    [before.toISOString(), batch],
  );
}
