import { AppError } from '@platform/errors';
import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import { findMembership, type TeamRow } from './repo';
import { can, isTeamRole, TEAM_PERMISSIONS, type TeamAction, type TeamRole } from './roles';

export type TeamAccess = { team: TeamRow; role: TeamRole; userId: string };

const ZTeamId = z.uuid();

/**
 * The caller's access to `:teamId` for `action`: not a member (or not a
 * team id) -> 404 `team not found`, the same answer, so teams cannot be
 * probed; a role below the action's -> 403 `forbidden` naming the
 * permission. Sets `res.locals.team`.
 */
export function teamAccess(prisma: PrismaClient, action: TeamAction): RequestHandler {
  return async (req, res, next) => {
    const teamId = ZTeamId.safeParse(req.params.teamId);
    const userId = requireAuthOf(res).userId;
    const found = teamId.success ? await findMembership(prisma, teamId.data, userId) : null;
    if (!found || !isTeamRole(found.role)) throw new AppError('team_not_found');
    if (!can(found.role, action)) {
      throw new AppError('forbidden', {
        details: [
          {
            path: `team.permissions.${action}`,
            message: `${action} needs the role ${TEAM_PERMISSIONS[action]} or above; yours is ${found.role}`,
          },
        ],
      });
    }
    res.locals.team = { team: found.team, role: found.role, userId } satisfies TeamAccess;
    next();
  };
}

export function teamOf(res: Response): TeamAccess {
  const access = res.locals.team as TeamAccess | undefined;
  if (!access) throw new Error('team route is missing teamAccess');
  return access;
}
