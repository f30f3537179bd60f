import type { PrismaClient } from '../generated/prisma/client';
import type { TeamRole } from './roles';

type Db = PrismaClient;

export type TeamRow = { id: string; name: string; subjectUserId: string; createdAt: Date };

/** The address of a team's billing subject: `.invalid` (RFC 2606) never receives a sign-in link. */
export const subjectEmailOf = (teamId: string) => `team+${teamId}@teams.invalid`;

/** Creates the team, its billing subject and the owner's membership, in one transaction. */
export async function insertTeam(prisma: Db, name: string, ownerId: string): Promise<TeamRow> {
  return prisma.$transaction(async (tx) => {
    const id = crypto.randomUUID();
    const subject = await tx.user.create({ data: { email: subjectEmailOf(id) }, select: { id: true } });
    const team = await tx.team.create({ data: { id, name, subjectUserId: subject.id } });
    await tx.teamMember.create({ data: { teamId: id, userId: ownerId, role: 'owner' } });
    return team;
  });
}

export async function findMembership(
  prisma: Db,
  teamId: string,
  userId: string,
): Promise<{ team: TeamRow; role: string } | null> {
  const row = await prisma.teamMember.findUnique({
    where: { teamId_userId: { teamId, userId } },
    select: { role: true, team: true },
  });
  return row ? { team: row.team, role: row.role } : null;
}

export async function listTeamsOf(prisma: Db, userId: string) {
  return prisma.teamMember.findMany({
    where: { userId },
    orderBy: { createdAt: 'asc' },
    select: { role: true, team: { select: { id: true, name: true, subjectUserId: true, createdAt: true } } },
  });
}

export async function listMembers(prisma: Db, teamId: string) {
  const rows = await prisma.teamMember.findMany({ where: { teamId }, orderBy: { createdAt: 'asc' } });
  const users = await prisma.user.findMany({
    where: { id: { in: rows.map((r) => r.userId) } },
    select: { id: true, email: true },
  });
  const email = new Map(users.map((u) => [u.id, u.email]));
  return rows.map((r) => ({
    userId: r.userId,
    email: email.get(r.userId) ?? '',
    role: r.role,
    createdAt: r.createdAt,
  }));
}

export async function setRole(prisma: Db, teamId: string, userId: string, role: TeamRole): Promise<void> {
  await prisma.teamMember.update({ where: { teamId_userId: { teamId, userId } }, data: { role } });
}

export async function removeMember(prisma: Db, teamId: string, userId: string): Promise<void> {
  await prisma.teamMember.delete({ where: { teamId_userId: { teamId, userId } } });
}

/** The owner becomes admin, `to` owner, in one transaction. */
export async function transferOwnership(prisma: Db, teamId: string, from: string, to: string): Promise<void> {
  await prisma.$transaction([
    prisma.teamMember.update({ where: { teamId_userId: { teamId, userId: from } }, data: { role: 'admin' } }),
    prisma.teamMember.update({ where: { teamId_userId: { teamId, userId: to } }, data: { role: 'owner' } }),
  ]);
}

export async function insertInvite(
  prisma: Db,
  row: {
    teamId: string;
    email: string;
    role: TeamRole;
    tokenHash: string;
    invitedBy: string;
    expiresAt: Date;
  },
): Promise<{ id: string }> {
  return prisma.teamInvite.create({ data: row, select: { id: true } });
}

/**
 * Marks the invite accepted and adds the member (an existing member keeps
 * their role), in one transaction; null when the token is unknown, used,
 * expired, or for another address.
 */
export async function acceptInvite(
  prisma: Db,
  tokenHash: string,
  user: { id: string; email: string },
  now: Date,
): Promise<{ teamId: string; role: string } | null> {
  return prisma.$transaction(async (tx) => {
    const invite = await tx.teamInvite.findUnique({ where: { tokenHash } });
    if (!invite || invite.acceptedAt || invite.expiresAt <= now || invite.email !== user.email) return null;
    const taken = await tx.teamInvite.updateMany({
      where: { id: invite.id, acceptedAt: null },
      data: { acceptedAt: now },
    });
    if (taken.count !== 1) return null;
    await tx.teamMember.upsert({
      where: { teamId_userId: { teamId: invite.teamId, userId: user.id } },
      create: { teamId: invite.teamId, userId: user.id, role: invite.role },
      update: {},
    });
    return { teamId: invite.teamId, role: invite.role };
  });
}
