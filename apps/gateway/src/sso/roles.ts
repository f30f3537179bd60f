import type { Logger } from '@platform/logging';
import type { Request, Response } from 'express';
import { recordAudit } from '../audit/record';
import type { RoleMapping, SsoConfig } from '../env-sso';
import type { PrismaClient } from '../generated/prisma/client';
import { findMembership } from '../teams/repo';
import { TEAM_ROLES, type TeamRole } from '../teams/roles';

/** At most this many values of the role claim are looked at (a token can carry hundreds of groups). */
const MAX_CLAIM_VALUES = 1000;

/** The claim's values: a string, or the strings of an array. */
function claimValues(claims: Record<string, unknown>, name: string): Set<string> {
  const raw = claims[name];
  const list = Array.isArray(raw) ? raw.slice(0, MAX_CLAIM_VALUES) : [raw];
  return new Set(list.filter((v): v is string => typeof v === 'string'));
}

/**
 * The team roles the ID token's role claim maps to (OIDC_ROLE_MAP): per
 * team, the most powerful role any of its values maps to.
 */
export function mappedRoles(
  config: SsoConfig,
  claims: Record<string, unknown>,
): Map<string, RoleMapping['role']> {
  const roles = new Map<string, RoleMapping['role']>();
  if (!config.roleClaim || config.roleMap.length === 0) return roles;
  const values = claimValues(claims, config.roleClaim);
  for (const m of config.roleMap) {
    if (!values.has(m.value)) continue;
    const held = roles.get(m.teamId);
    if (!held || TEAM_ROLES.indexOf(m.role) < TEAM_ROLES.indexOf(held)) roles.set(m.teamId, m.role);
  }
  return roles;
}

type Deps = { prisma: PrismaClient; logger: Logger };

/**
 * Puts the user into each mapped team with the mapped role, at every SSO
 * sign-in: a new member joins, a member whose role differs gets the mapped
 * one (the owner stays owner). Each change goes to the team's audit log with
 * actor kind `sso`. Teams the claim no longer maps to are left as they are.
 */
export async function applyMappedRoles(
  deps: Deps,
  req: Request,
  res: Response,
  userId: string,
  roles: Map<string, RoleMapping['role']>,
): Promise<void> {
  for (const [teamId, role] of roles) {
    const found = await findMembership(deps.prisma, teamId, userId);
    const team = found?.team ?? (await deps.prisma.team.findUnique({ where: { id: teamId } }));
    if (!team) {
      deps.logger.warn({ teamId }, 'sso: OIDC_ROLE_MAP names a team that does not exist');
      continue;
    }
    const before = found?.role as TeamRole | undefined;
    if (before === role || before === 'owner') continue;
    await deps.prisma.teamMember.upsert({
      where: { teamId_userId: { teamId, userId } },
      create: { teamId, userId, role },
      update: { role },
    });
    await recordAudit(
      deps,
      req,
      res,
      {
        action: before ? 'member.role' : 'member.join',
        ownerUserId: team.subjectUserId,
        teamId,
        target: `user:${userId}`,
        ...(before ? { before: { role: before } } : {}),
        after: { role, via: 'sso' },
      },
      { actorUserId: userId, actorKind: 'sso' },
    );
  }
}
