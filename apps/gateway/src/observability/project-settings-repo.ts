import type { RawSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';

/** A project's stored settings (project_settings); a project without a row has the defaults. */
export type ProjectSettingsRow = { projectId: string; captureContent: boolean; updatedAt: Date };

/** The owner's projects whose prompts and answers the request log keeps. */
export async function findCapturedProjects(sql: RawSql, ownerUserId: string): Promise<string[]> {
  // Raw SQL (the pool's `pg`): a chat reads this, and a chat's queries stay off Prisma's
  // query compiler (~8-9 MB per worker once loaded; docs/performance.md, issue 46).
  const rows = await sql.query<{ project_id: string }>(
    'SELECT project_id FROM project_settings WHERE owner_user_id = $1::uuid AND capture_content',
    [ownerUserId],
  );
  return rows.map((r) => r.project_id);
}

/** Every stored project setting of the owner, by project id. */
export function listProjectSettings(
  prisma: PrismaClient,
  ownerUserId: string,
): Promise<ProjectSettingsRow[]> {
  return prisma.projectSettings.findMany({
    where: { ownerUserId },
    select: { projectId: true, captureContent: true, updatedAt: true },
    orderBy: { projectId: 'asc' },
  });
}

export async function findProjectSettings(
  prisma: PrismaClient,
  ownerUserId: string,
  projectId: string,
): Promise<ProjectSettingsRow | null> {
  return prisma.projectSettings.findUnique({
    where: { ownerUserId_projectId: { ownerUserId, projectId } },
    select: { projectId: true, captureContent: true, updatedAt: true },
  });
}

export function upsertProjectSettings(
  prisma: PrismaClient,
  ownerUserId: string,
  projectId: string,
  settings: { captureContent: boolean },
): Promise<ProjectSettingsRow> {
  return prisma.projectSettings.upsert({
    where: { ownerUserId_projectId: { ownerUserId, projectId } },
    create: { ownerUserId, projectId, ...settings },
    update: settings,
    select: { projectId: true, captureContent: true, updatedAt: true },
  });
}

/** Whether the user is a team's billing subject (docs/teams.md#billing), not a person. */
export async function isTeamSubject(prisma: PrismaClient, userId: string): Promise<boolean> {
  return (await prisma.team.count({ where: { subjectUserId: userId } })) > 0;
}
