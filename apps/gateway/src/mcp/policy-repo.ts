import type { PrismaClient } from '../generated/prisma/client';
import type { McpPolicy } from './policy';

export type McpPolicyScope = 'api_key' | 'project';
export type McpPolicyRow = McpPolicy & { scope: McpPolicyScope; subject: string; updatedAt: Date };

type Row = {
  scope: string;
  subject: string;
  allow: string[];
  restrict: boolean;
  deny: string[];
  updatedAt: Date;
};

function toPolicy(row: Row): McpPolicyRow {
  return {
    scope: row.scope === 'project' ? 'project' : 'api_key',
    subject: row.subject,
    allow: row.restrict ? row.allow : null,
    deny: row.deny,
    updatedAt: row.updatedAt,
  };
}

/** The policies that govern a session: its key's and its project's (each may be absent). */
export async function findSessionPolicies(
  prisma: PrismaClient,
  owner: { userId: string; apiKeyId: string; projectId: string },
): Promise<McpPolicy[]> {
  const rows = await prisma.mcpPolicy.findMany({
    where: {
      userId: owner.userId,
      OR: [
        { scope: 'api_key', subject: owner.apiKeyId },
        { scope: 'project', subject: owner.projectId },
      ],
    },
  });
  return rows.map(toPolicy);
}

export async function listPolicies(prisma: PrismaClient, userId: string): Promise<McpPolicyRow[]> {
  const rows = await prisma.mcpPolicy.findMany({
    where: { userId },
    orderBy: [{ scope: 'asc' }, { subject: 'asc' }],
  });
  return rows.map(toPolicy);
}

export async function upsertPolicy(
  prisma: PrismaClient,
  userId: string,
  policy: McpPolicy & { scope: McpPolicyScope; subject: string },
): Promise<McpPolicyRow> {
  const data = { allow: policy.allow ?? [], restrict: policy.allow !== null, deny: policy.deny };
  const row = await prisma.mcpPolicy.upsert({
    where: { userId_scope_subject: { userId, scope: policy.scope, subject: policy.subject } },
    create: { userId, scope: policy.scope, subject: policy.subject, ...data },
    update: data,
  });
  return toPolicy(row);
}

/** False when there was no such policy. */
export async function deletePolicy(
  prisma: PrismaClient,
  userId: string,
  id: { scope: McpPolicyScope; subject: string },
): Promise<boolean> {
  const { count } = await prisma.mcpPolicy.deleteMany({
    where: { userId, scope: id.scope, subject: id.subject },
  });
  return count > 0;
}
