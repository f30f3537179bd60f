import {
  type ListProjectSettingsResponse,
  type ProjectSettings,
  ZSetProjectSettingsRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type Request, type RequestHandler, type Response, Router } from 'express';
import { recordAudit } from '../audit/record';
import { requireAuthOf } from '../auth/api-key-auth';
import type { PrismaClient } from '../generated/prisma/client';
import type { ProjectCapture } from './capture';
import {
  findProjectSettings,
  isTeamSubject,
  listProjectSettings,
  type ProjectSettingsRow,
  upsertProjectSettings,
} from './project-settings-repo';

export function toProjectSettings(row: ProjectSettingsRow): ProjectSettings {
  return {
    project_id: row.projectId,
    capture_content: row.captureContent,
    updated_at: row.updatedAt.toISOString(),
  };
}

type SettingsDeps = { prisma: PrismaClient; logger: Logger; capture: ProjectCapture };

/**
 * Sets one project's capture flag for `owner` (a user, or a team's billing
 * subject), audits the change, and drops the cached flag on every instance.
 * Shared by the user's route and the team's.
 */
export async function setProjectCapture(
  deps: SettingsDeps,
  req: Request,
  res: Response,
  target: { ownerUserId: string; teamId?: string | undefined },
): Promise<ProjectSettings> {
  const body = parseRequestPart(ZSetProjectSettingsRequest, req.body);
  const before = await findProjectSettings(deps.prisma, target.ownerUserId, body.project_id);
  const row = await upsertProjectSettings(deps.prisma, target.ownerUserId, body.project_id, {
    captureContent: body.capture_content,
  });
  await deps.capture.invalidate(target.ownerUserId);
  await recordAudit(deps, req, res, {
    action: 'project.capture',
    ownerUserId: target.ownerUserId,
    ...(target.teamId ? { teamId: target.teamId } : {}),
    target: `project:${body.project_id}`,
    before: { capture_content: before?.captureContent ?? false },
    after: { capture_content: row.captureContent },
  });
  return toProjectSettings(row);
}

export async function listSettings(
  prisma: PrismaClient,
  ownerUserId: string,
): Promise<ListProjectSettingsResponse> {
  return { projects: (await listProjectSettings(prisma, ownerUserId)).map(toProjectSettings) };
}

/**
 * `GET /api/v1/project-settings`: the caller's projects with stored settings.
 * `PUT /api/v1/project-settings`: turns prompt and answer capture on or off
 * for one project (docs/observability.md#prompt-and-answer-capture). Only
 * the project's owner: a team's own key (its billing subject) is refused;
 * team admins use the team's route.
 */
export function createProjectSettingsRouter(
  opts: SettingsDeps & { auth: RequestHandler; csrf: RequestHandler },
): Router {
  const router = Router();
  router.get('/api/v1/project-settings', opts.auth, async (_req, res) => {
    res.json(await listSettings(opts.prisma, requireAuthOf(res).userId));
  });
  router.put('/api/v1/project-settings', opts.auth, opts.csrf, jsonBody('4kb'), async (req, res) => {
    const { userId } = requireAuthOf(res);
    if (await isTeamSubject(opts.prisma, userId))
      throw new AppError('forbidden', {
        details: [
          {
            path: 'project_settings',
            message: "a team's key cannot change what is captured; a team admin sets it for the team",
          },
        ],
      });
    res.json(await setProjectCapture(opts, req, res, { ownerUserId: userId }));
  });
  return router;
}
