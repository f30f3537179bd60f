import type { Logger } from '@platform/logging';
import type { Request, Response } from 'express';
import type { AuthContext } from '../auth/types';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** What administrative actions the log knows (docs/teams.md#audit-log). */
export type AuditAction =
  | 'api_key.create'
  | 'api_key.revoke'
  | 'api_key.rules'
  | 'budget.set'
  | 'budget.delete'
  | 'project.capture'
  | 'provider_key.set'
  | 'provider_key.delete'
  | 'sign_in.magic_link'
  | 'sign_in.sso'
  | 'team.create'
  | 'team.transfer'
  | 'member.invite'
  | 'member.join'
  | 'member.role'
  | 'member.remove'
  | 'member.leave';

/** A JSON value as stored in `before`/`after`: never secrets (no key plaintext, hash or provider key). */
export type AuditState = Prisma.InputJsonValue;

export type AuditEntry = {
  action: AuditAction;
  /** Whose log: the user whose key, budget, provider key or session changed. */
  ownerUserId: string;
  /** The team whose log it is too (its admins read it). */
  teamId?: string;
  /** What was acted on, as kind:id. */
  target?: string;
  before?: AuditState | null;
  after?: AuditState | null;
};

export type AuditDeps = { prisma: Pick<PrismaClient, 'auditEvent'>; logger: Logger };

const MAX_USER_AGENT = 256;

/** Who acted and from where: the request's authenticated user, address and user agent. */
function actorOf(res: Response): { actorUserId: string | null; actorKind: string } {
  const auth = res.locals.auth as AuthContext | undefined;
  return { actorUserId: auth?.userId ?? null, actorKind: auth?.kind ?? 'anonymous' };
}

/**
 * Appends one audit event (an INSERT; the table refuses UPDATE and DELETE
 * outside the retention purge). Called after the action succeeded. A failed
 * write is logged at error level and does not undo or fail the action: the
 * change is already made, and the operator's alert on that log line is the
 * remedy (docs/teams.md#audit-log).
 */
export async function recordAudit(
  deps: AuditDeps,
  req: Request,
  res: Response,
  entry: AuditEntry,
  actor: { actorUserId: string | null; actorKind: string } = actorOf(res),
): Promise<void> {
  const ua = req.headers['user-agent'];
  try {
    await deps.prisma.auditEvent.create({
      data: {
        ...actor,
        ownerUserId: entry.ownerUserId,
        teamId: entry.teamId ?? null,
        action: entry.action,
        target: entry.target ?? null,
        ip: req.ip ?? req.socket.remoteAddress ?? null,
        userAgent: typeof ua === 'string' ? ua.slice(0, MAX_USER_AGENT) : null,
        ...(entry.before != null ? { before: entry.before } : {}),
        ...(entry.after != null ? { after: entry.after } : {}),
      },
    });
  } catch (err) {
    deps.logger.error(
      { err: err instanceof Error ? err.message : String(err), action: entry.action, target: entry.target },
      'audit event not recorded',
    );
  }
}
