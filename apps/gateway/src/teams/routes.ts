import { randomBytes } from 'node:crypto';
import {
  type ListTeamsResponse,
  type TeamSummary,
  ZAcceptTeamInviteRequest,
  ZCreateApiKeyRequest,
  ZCreateTeamRequest,
  ZRevokeApiKeyRequest,
  ZTeamInviteRequest,
  ZTeamMemberRequest,
  ZTeamMemberRoleRequest,
  ZUpdateApiKeyRulesRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { listApiKeys } from '../api-keys/list-api-keys';
import { revokeApiKey } from '../api-keys/revoke-api-key';
import { updateApiKeyRules } from '../api-keys/update-rules';
import { listAuditEvents } from '../audit/repo';
import { authenticate, requireAuthOf } from '../auth/api-key-auth';
import { requireTrustedOrigin } from '../auth/csrf';
import { hashSessionToken } from '../auth/sessions';
import { issueSignInCode } from '../sign-in/magic-link';
import { teamAccess, teamOf } from './access';
import { createTeamKey } from './keys';
import * as repo from './repo';
import { addTeamResourceRoutes } from './resource-routes';
import { canManage, isTeamRole, permissionsOf, type TeamRole } from './roles';
import { auditTeam, type Guards, type TeamDeps } from './team-deps';

const INVITE_TTL_MS = 7 * 86_400_000;

const summary = (team: repo.TeamRow, role: TeamRole): TeamSummary => ({
  team_id: team.id,
  name: team.name,
  role,
  billing_user_id: team.subjectUserId,
  permissions: permissionsOf(role),
});

/** The member `user_id` names, or 404 `team member not found`. */
async function memberRole(deps: TeamDeps, teamId: string, userId: string): Promise<TeamRole> {
  const found = await repo.findMembership(deps.prisma, teamId, userId);
  if (!found || !isTeamRole(found.role)) throw new AppError('team_member_not_found');
  return found.role;
}

const forbidden = (message: string) =>
  new AppError('forbidden', { details: [{ path: 'team.role', message }] });

/**
 * `/api/v1/teams`: teams, members, invites, team keys, budgets, provider keys
 * and the team's audit log (docs/teams.md). Session only; writes check the
 * Origin. Each route names its permission (roles.ts's table).
 *
 * Over 80 lines: the team path list in one place, each route a few lines naming its permission.
 */
export function createTeamRouter(deps: TeamDeps): Router {
  const router = Router();
  const session = authenticate(deps, { allow: ['session'] });
  const csrf = requireTrustedOrigin(deps);
  const json = jsonBody('8kb');
  const read = (action: Parameters<typeof teamAccess>[1]): RequestHandler[] => [
    session,
    teamAccess(deps.prisma, action),
  ];
  const write = (action: Parameters<typeof teamAccess>[1]): RequestHandler[] => [
    session,
    csrf,
    json,
    teamAccess(deps.prisma, action),
  ];

  router.post('/api/v1/teams', session, csrf, json, async (req, res) => {
    const body = parseRequestPart(ZCreateTeamRequest, req.body);
    const userId = requireAuthOf(res).userId;
    const team = await repo.insertTeam(deps.prisma, body.name, userId);
    res.locals.team = { team, role: 'owner', userId };
    await auditTeam(deps, req, res, {
      action: 'team.create',
      target: `team:${team.id}`,
      after: { name: team.name },
    });
    res.status(201).json(summary(team, 'owner'));
  });

  router.get('/api/v1/teams', session, async (_req, res) => {
    const rows = await repo.listTeamsOf(deps.prisma, requireAuthOf(res).userId);
    const teams = rows.flatMap((r) => (isTeamRole(r.role) ? [summary(r.team, r.role)] : []));
    res.json({ teams } satisfies ListTeamsResponse);
  });

  router.post('/api/v1/teams/invites/accept', session, csrf, json, async (req, res) => {
    const { token } = parseRequestPart(ZAcceptTeamInviteRequest, req.body);
    const auth = requireAuthOf(res);
    if (auth.kind !== 'session') throw new AppError('missing_authentication');
    const joined = await repo.acceptInvite(
      deps.prisma,
      hashSessionToken(token),
      { id: auth.userId, email: auth.email },
      new Date(deps.clock()),
    );
    if (!joined) throw new AppError('invalid_invite');
    const found = await repo.findMembership(deps.prisma, joined.teamId, auth.userId);
    if (found) {
      res.locals.team = { team: found.team, role: found.role, userId: auth.userId };
      await auditTeam(deps, req, res, {
        action: 'member.join',
        target: `user:${auth.userId}`,
        after: { role: found.role },
      });
    }
    res.json({ team_id: joined.teamId, role: found?.role ?? joined.role });
  });

  router.get('/api/v1/teams/:teamId/members', ...read('members.read'), async (_req, res) => {
    const members = await repo.listMembers(deps.prisma, teamOf(res).team.id);
    res.json({
      members: members.map((m) => ({
        user_id: m.userId,
        email: m.email,
        role: m.role,
        joined_at: m.createdAt.toISOString(),
      })),
    });
  });

  router.post('/api/v1/teams/:teamId/invites', ...write('members.invite'), async (req, res) => {
    const body = parseRequestPart(ZTeamInviteRequest, req.body);
    const { team, role, userId } = teamOf(res);
    if (!canManage(role, body.role)) throw forbidden(`a ${role} cannot invite a ${body.role}`);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(deps.clock() + INVITE_TTL_MS);
    const email = body.email.toLowerCase();
    const invite = await repo.insertInvite(deps.prisma, {
      teamId: team.id,
      email,
      role: body.role,
      tokenHash: hashSessionToken(token),
      invitedBy: userId,
      expiresAt,
    });
    // The console's sign-in link with the invitation: opening it signs the invited address in
    // (the magic link's code) and the console then accepts the invitation.
    const { code } = await issueSignInCode(deps, email);
    const link = new URL(`${deps.env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}/`);
    link.searchParams.set('code', code);
    link.searchParams.set('team_invite', token);
    await deps.mailer.send({
      to: email,
      subject: `You are invited to the team ${team.name}`,
      text: `Sign in and join the team ${team.name} as ${body.role}:\n\n${link.href}\n\nThe sign-in link works once within ${deps.env.MAGIC_LINK_TTL_MINUTES} minutes; the invitation expires on ${expiresAt.toISOString()}.`,
    });
    await auditTeam(deps, req, res, {
      action: 'member.invite',
      target: `invite:${invite.id}`,
      after: { email, role: body.role },
    });
    res
      .status(201)
      .json({ invite_id: invite.id, email, role: body.role, expires_at: expiresAt.toISOString() });
  });

  router.post('/api/v1/teams/:teamId/members/role', ...write('members.role'), async (req, res) => {
    const body = parseRequestPart(ZTeamMemberRoleRequest, req.body);
    const { team, role, userId } = teamOf(res);
    if (body.user_id === userId) throw forbidden('your own role is changed by another admin or the owner');
    const current = await memberRole(deps, team.id, body.user_id);
    if (!canManage(role, current) || !canManage(role, body.role))
      throw forbidden(`a ${role} cannot change a ${current} to ${body.role}`);
    await repo.setRole(deps.prisma, team.id, body.user_id, body.role);
    await auditTeam(deps, req, res, {
      action: 'member.role',
      target: `user:${body.user_id}`,
      before: { role: current },
      after: { role: body.role },
    });
    res.json({ user_id: body.user_id, role: body.role });
  });

  router.post('/api/v1/teams/:teamId/members/remove', ...write('members.remove'), async (req, res) => {
    const body = parseRequestPart(ZTeamMemberRequest, req.body);
    const { team, role } = teamOf(res);
    const current = await memberRole(deps, team.id, body.user_id);
    if (!canManage(role, current)) throw forbidden(`a ${role} cannot remove a ${current}`);
    await repo.removeMember(deps.prisma, team.id, body.user_id);
    await auditTeam(deps, req, res, {
      action: 'member.remove',
      target: `user:${body.user_id}`,
      before: { role: current },
    });
    res.status(204).end();
  });

  router.post('/api/v1/teams/:teamId/leave', ...write('team.read'), async (req, res) => {
    const { team, role, userId } = teamOf(res);
    if (role === 'owner') throw forbidden('the owner transfers ownership before leaving');
    await repo.removeMember(deps.prisma, team.id, userId);
    await auditTeam(deps, req, res, { action: 'member.leave', target: `user:${userId}`, before: { role } });
    res.status(204).end();
  });

  router.post('/api/v1/teams/:teamId/transfer', ...write('team.transfer'), async (req, res) => {
    const body = parseRequestPart(ZTeamMemberRequest, req.body);
    const { team, userId } = teamOf(res);
    if (body.user_id === userId) throw forbidden('you are the owner already');
    const current = await memberRole(deps, team.id, body.user_id);
    await repo.transferOwnership(deps.prisma, team.id, userId, body.user_id);
    await auditTeam(deps, req, res, {
      action: 'team.transfer',
      target: `user:${body.user_id}`,
      before: { owner: userId, role: current },
      after: { owner: body.user_id },
    });
    res.json({ owner: body.user_id });
  });

  addTeamKeyRoutes(router, deps, read, write);
  addTeamResourceRoutes(router, deps, read, write);
  return router;
}

function addTeamKeyRoutes(router: Router, deps: TeamDeps, read: Guards, write: Guards): void {
  router.post('/api/v1/teams/:teamId/api-keys', ...write('keys.write'), async (req, res) => {
    const body = parseRequestPart(ZCreateApiKeyRequest, req.body);
    const created = await createTeamKey(deps, teamOf(res).team.subjectUserId, body);
    await auditTeam(deps, req, res, {
      action: 'api_key.create',
      target: `api_key:${created.key_id}`,
      after: {
        name: created.name,
        scope: created.scope,
        key_prefix: created.key_prefix,
        rules: body.rules ?? null,
        expires_at: body.expires_at ?? null,
      },
    });
    res.status(201).json(created);
  });
  router.get('/api/v1/teams/:teamId/api-keys', ...read('keys.read'), async (_req, res) => {
    res.json({ keys: await listApiKeys(deps, teamOf(res).team.subjectUserId) });
  });
  router.post('/api/v1/teams/:teamId/api-keys/revoke', ...write('keys.write'), async (req, res) => {
    const body = parseRequestPart(ZRevokeApiKeyRequest, req.body);
    const { changed } = await revokeApiKey(deps, {
      userId: teamOf(res).team.subjectUserId,
      keyId: body.key_id,
    });
    if (changed) {
      await auditTeam(deps, req, res, {
        action: 'api_key.revoke',
        target: `api_key:${body.key_id}`,
        before: { status: 'active' },
        after: { status: 'revoked' },
      });
    }
    res.json({ key_id: body.key_id, status: 'revoked' });
  });
  router.post('/api/v1/teams/:teamId/api-keys/rules', ...write('keys.write'), async (req, res) => {
    const body = parseRequestPart(ZUpdateApiKeyRulesRequest, req.body);
    const change = await updateApiKeyRules(deps, {
      userId: teamOf(res).team.subjectUserId,
      keyId: body.key_id,
      ...body,
    });
    await auditTeam(deps, req, res, { action: 'api_key.rules', target: `api_key:${body.key_id}`, ...change });
    res.json({ key_id: body.key_id, ...change.after });
  });
  router.get('/api/v1/teams/:teamId/audit', ...read('audit.read'), async (_req, res) => {
    const rows = await listAuditEvents(deps.prisma, { teamId: teamOf(res).team.id, limit: 500 });
    res.json({
      events: rows.map((r) => ({
        id: r.id.toString(),
        at: r.at.toISOString(),
        actor_user_id: r.actorUserId,
        actor_kind: r.actorKind,
        action: r.action,
        target: r.target,
        ip: r.ip,
        before: r.before ?? null,
        after: r.after ?? null,
      })),
    });
  });
}
