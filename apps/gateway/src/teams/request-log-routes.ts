import { type RequestLogResponse, ZRequestLogQuery } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import { authenticate } from '../auth/api-key-auth';
import { requireTrustedOrigin } from '../auth/csrf';
import type { AuthDeps } from '../auth/deps';
import type { ProjectCapture } from '../observability/capture';
import { listSettings, setProjectCapture } from '../observability/project-settings-routes';
import { findRequestLog, searchRequestLog } from '../observability/request-log-repo';
import { encodeCursor, filterOf, isRequestId, toDetail, toEntry } from '../observability/request-log-routes';
import { teamAccess, teamOf } from './access';
import { can } from './roles';

export type TeamRequestLogDeps = AuthDeps & { logger: Logger; projectCapture: ProjectCapture };

/**
 * The team's request log and project settings (docs/teams.md,
 * docs/observability.md): its members read the log (`request_log.read`);
 * captured prompts and answers, and turning capture on or off, are for
 * admins and the owner (`projects.write`). Session only; writes check the Origin.
 */
export function createTeamRequestLogRouter(deps: TeamRequestLogDeps): Router {
  const router = Router();
  const session = authenticate(deps, { allow: ['session'] });
  const readLog = [session, teamAccess(deps.prisma, 'request_log.read')];
  router.get('/api/v1/teams/:teamId/request-log', ...readLog, async (req, res) => {
    const query = parseRequestPart(ZRequestLogQuery, req.query);
    const rows = await searchRequestLog(deps.prisma, filterOf(teamOf(res).team.subjectUserId, query));
    const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
    res.json({
      requests: rows.map(toEntry),
      next_cursor: last ? encodeCursor(last) : null,
    } satisfies RequestLogResponse);
  });
  router.get('/api/v1/teams/:teamId/request-log/:id', ...readLog, async (req, res) => {
    const id = req.params.id;
    if (!isRequestId(id)) throw new AppError('not_found');
    const access = teamOf(res);
    const row = await findRequestLog(deps.prisma, access.team.subjectUserId, id.toLowerCase());
    if (!row) throw new AppError('not_found');
    res.json(toDetail(row, can(access.role, 'projects.write')));
  });
  router.get('/api/v1/teams/:teamId/project-settings', ...readLog, async (_req, res) => {
    res.json(await listSettings(deps.prisma, teamOf(res).team.subjectUserId));
  });
  router.put(
    '/api/v1/teams/:teamId/project-settings',
    session,
    requireTrustedOrigin(deps),
    jsonBody('4kb'),
    teamAccess(deps.prisma, 'projects.write'),
    async (req, res) => {
      const { team } = teamOf(res);
      const capture = { prisma: deps.prisma, logger: deps.logger, capture: deps.projectCapture };
      res.json(
        await setProjectCapture(capture, req, res, { ownerUserId: team.subjectUserId, teamId: team.id }),
      );
    },
  );
  return router;
}
