import type { PrismaClient } from '../generated/prisma/client';

type Db = Pick<PrismaClient, 'session'>;

export type SessionRow = {
  id: string;
  userId: string;
  email: string;
  createdAt: Date;
  expiresAt: Date;
};

export async function insertSession(
  prisma: Db,
  row: { userId: string; tokenHash: string; expiresAt: Date; createdAt: Date; userAgent: string | null },
): Promise<{ id: string }> {
  return prisma.session.create({
    data: { ...row, lastSeenAt: row.createdAt },
    select: { id: true },
  });
}

/** The session with this token hash if it is neither revoked nor expired at `now`. */
export async function findLiveSession(prisma: Db, tokenHash: string, now: Date): Promise<SessionRow | null> {
  const row = await prisma.session.findFirst({
    where: { tokenHash, revokedAt: null, expiresAt: { gt: now } },
    select: { id: true, userId: true, createdAt: true, expiresAt: true, user: { select: { email: true } } },
  });
  if (!row) return null;
  return {
    id: row.id,
    userId: row.userId,
    email: row.user.email,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  };
}

export async function extendSession(prisma: Db, id: string, now: Date, expiresAt: Date): Promise<void> {
  await prisma.session.updateMany({
    where: { id, revokedAt: null },
    data: { expiresAt, lastSeenAt: now },
  });
}

export async function revokeSessionByHash(prisma: Db, tokenHash: string, now: Date): Promise<void> {
  await prisma.session.updateMany({ where: { tokenHash, revokedAt: null }, data: { revokedAt: now } });
}
