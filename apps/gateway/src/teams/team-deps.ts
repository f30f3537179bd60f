import type { Request, RequestHandler, Response } from 'express';
import { recordAudit } from '../audit/record';
import type { AuthDeps } from '../auth/deps';
import type { Budgets } from '../budgets/budgets';
import type { Mailer } from '../mail/mailer';
import type { ProviderKeyDeps } from '../provider-keys/deps';
import { type teamAccess, teamOf } from './access';

export type TeamDeps = AuthDeps & ProviderKeyDeps & { budgets: Budgets; mailer: Mailer };

/** The middleware of a team route for one permission: session (and for writes Origin, body), then access. */
export type Guards = (action: Parameters<typeof teamAccess>[1]) => RequestHandler[];

/** Audits a team action: the team's log (its subject is the owner of the record). */
export function auditTeam(
  deps: TeamDeps,
  req: Request,
  res: Response,
  entry: Omit<Parameters<typeof recordAudit>[3], 'ownerUserId' | 'teamId'>,
) {
  const { team } = teamOf(res);
  return recordAudit(deps, req, res, { ...entry, ownerUserId: team.subjectUserId, teamId: team.id });
}
