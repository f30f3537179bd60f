import { z } from 'zod';
import { ZEmail, ZIsoTimestamp } from './common';
import { ZBudget } from './gateway-budgets';

/** Team roles, most to least powerful (docs/teams.md#roles). */
export const TEAM_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export const ZTeamRole = z.enum(TEAM_ROLES).meta({ id: 'TeamRole' });
export type TeamRoleName = z.infer<typeof ZTeamRole>;
const ZGivenRole = ZTeamRole.exclude(['owner']);

/** `POST /api/v1/teams`. */
export const ZCreateTeamRequest = z.strictObject({ name: z.string().trim().min(1).max(64) });
export type CreateTeamRequest = z.infer<typeof ZCreateTeamRequest>;

/** A team as one of its members sees it. */
export const ZTeamSummary = z
  .object({
    team_id: z.uuid(),
    name: z.string(),
    role: ZTeamRole,
    billing_user_id: z.uuid().meta({
      description:
        "The team's own user id: its keys' usage is billed to it (payment's user_id, one Stripe customer per team).",
    }),
    permissions: z
      .array(z.string())
      .meta({ description: 'What the caller may do in the team (docs/teams.md#roles).' }),
  })
  .meta({ id: 'TeamSummary' });
export type TeamSummary = z.infer<typeof ZTeamSummary>;

/** `GET /api/v1/teams`. */
export const ZListTeamsResponse = z
  .object({ teams: z.array(ZTeamSummary) })
  .meta({ id: 'ListTeamsResponse' });
export type ListTeamsResponse = z.infer<typeof ZListTeamsResponse>;

export const ZTeamMember = z
  .object({ user_id: z.uuid(), email: z.string(), role: ZTeamRole, joined_at: ZIsoTimestamp })
  .meta({ id: 'TeamMember' });
export type TeamMember = z.infer<typeof ZTeamMember>;

/** `GET /api/v1/teams/{team_id}/members`. */
export const ZListTeamMembersResponse = z
  .object({ members: z.array(ZTeamMember) })
  .meta({ id: 'ListTeamMembersResponse' });
export type ListTeamMembersResponse = z.infer<typeof ZListTeamMembersResponse>;

/** `POST /api/v1/teams/{team_id}/invites`. */
export const ZTeamInviteRequest = z.strictObject({ email: ZEmail, role: ZGivenRole });
export type TeamInviteRequest = z.infer<typeof ZTeamInviteRequest>;
export const ZTeamInviteResponse = z
  .object({ invite_id: z.uuid(), email: z.string(), role: ZGivenRole, expires_at: ZIsoTimestamp })
  .meta({ id: 'TeamInviteResponse' });
export type TeamInviteResponse = z.infer<typeof ZTeamInviteResponse>;

/** `POST /api/v1/teams/invites/accept`. */
export const ZAcceptTeamInviteRequest = z.strictObject({ token: z.string().min(1).max(128) });
export type AcceptTeamInviteRequest = z.infer<typeof ZAcceptTeamInviteRequest>;
export const ZAcceptTeamInviteResponse = z.object({ team_id: z.uuid(), role: ZTeamRole });
export type AcceptTeamInviteResponse = z.infer<typeof ZAcceptTeamInviteResponse>;

/** `POST …/members/remove`, `…/transfer`. */
export const ZTeamMemberRequest = z.strictObject({ user_id: z.uuid() });
export type TeamMemberRequest = z.infer<typeof ZTeamMemberRequest>;
/** `POST …/members/role`. */
export const ZTeamMemberRoleRequest = z.strictObject({ user_id: z.uuid(), role: ZGivenRole });
export type TeamMemberRoleRequest = z.infer<typeof ZTeamMemberRoleRequest>;

/** `GET /api/v1/teams/{team_id}/budgets`: the team's budgets with their use, and today's tokens. */
export const ZTeamBudgetsResponse = z
  .object({
    currency: z.string(),
    today: z.object({ day: z.string(), total_tokens: z.number().int() }),
    budgets: z.array(ZBudget),
  })
  .meta({ id: 'TeamBudgetsResponse' });
export type TeamBudgetsResponse = z.infer<typeof ZTeamBudgetsResponse>;

/** One event of a team's audit log (docs/teams.md#audit-log). */
export const ZTeamAuditEvent = z
  .object({
    id: z.string(),
    at: ZIsoTimestamp,
    actor_user_id: z.string().nullable(),
    actor_kind: z.string(),
    action: z.string(),
    target: z.string().nullable(),
    ip: z.string().nullable(),
    before: z.unknown(),
    after: z.unknown(),
  })
  .meta({ id: 'TeamAuditEvent' });
export type TeamAuditEvent = z.infer<typeof ZTeamAuditEvent>;

/** `GET /api/v1/teams/{team_id}/audit`: the 500 newest events. */
export const ZTeamAuditResponse = z
  .object({ events: z.array(ZTeamAuditEvent) })
  .meta({ id: 'TeamAuditResponse' });
export type TeamAuditResponse = z.infer<typeof ZTeamAuditResponse>;

/** The answer of `POST …/members/role`. */
export const ZTeamMemberRoleResponse = ZTeamMemberRoleRequest.meta({ id: 'TeamMemberRoleResponse' });
/** The answer of `POST …/transfer`: the new owner. */
export const ZTeamTransferResponse = z.object({ owner: z.uuid() }).meta({ id: 'TeamTransferResponse' });
