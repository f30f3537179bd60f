import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@platform/errors/codes';
import { z } from 'zod';
import {
  ZCreateApiKeyRequest,
  ZCreateApiKeyResponse,
  ZListApiKeysResponse,
  ZRevokeApiKeyRequest,
  ZRevokeApiKeyResponse,
  ZUpdateApiKeyRulesRequest,
  ZUpdateApiKeyRulesResponse,
} from './gateway-auth';
import { ZBudgetId, ZSetBudgetRequest } from './gateway-budgets';
import {
  ZListProviderKeysResponse,
  ZProviderKeyParams,
  ZStoredProviderKey,
  ZStoreProviderKeyRequest,
} from './gateway-keys';
import {
  ZListProjectSettingsResponse,
  ZProjectSettings,
  ZRequestLogDetail,
  ZRequestLogQuery,
  ZRequestLogResponse,
  ZSetProjectSettingsRequest,
} from './gateway-request-log';
import {
  ZAcceptTeamInviteRequest,
  ZAcceptTeamInviteResponse,
  ZCreateTeamRequest,
  ZListTeamMembersResponse,
  ZListTeamsResponse,
  ZTeamAuditResponse,
  ZTeamBudgetsResponse,
  ZTeamInviteRequest,
  ZTeamInviteResponse,
  ZTeamMemberRequest,
  ZTeamMemberRoleRequest,
  ZTeamMemberRoleResponse,
  ZTeamSummary,
  ZTeamTransferResponse,
} from './gateway-teams';
import { ZUsageQuery, ZUsageResponse } from './gateway-usage';
import { buildErrorResponses } from './openapi-errors';
import { jsonBody, jsonResponse } from './openapi-shared';

export const TEAMS_TAG = {
  name: 'Teams',
  description:
    'Teams, roles, invitations, team keys, budgets, provider keys, usage and the audit log (docs/teams.md). Session only; writes check the Origin.',
};

const SESSION = [{ SessionCookie: [] }];
const READ_ERRORS: readonly ErrorCode[] = [
  'missing_authentication',
  'team_not_found',
  'forbidden',
  'internal',
];
const WRITE_ERRORS: readonly ErrorCode[] = [
  ...READ_ERRORS,
  'csrf_origin',
  'validation_failed',
  'deserialization_error',
];
const ZTeamPath = z.object({ teamId: z.uuid().meta({ description: 'The team id (`team_id`).' }) });

type Operation = {
  method: 'get' | 'post' | 'put' | 'delete';
  /** After `/api/v1/teams/{teamId}/`. */
  path: string;
  operationId: string;
  summary: string;
  /** The least role (docs/teams.md#roles). */
  role: 'viewer' | 'member' | 'admin' | 'owner';
  body?: z.ZodType;
  query?: z.ZodObject;
  /** Path parameters besides teamId. */
  params?: z.ZodObject;
  ok: [status: number, ResponseConfig];
  errors?: readonly ErrorCode[];
};

const noContent = (description: string): [number, ResponseConfig] => [204, { description }];

/** Every route under one team, as `teams/routes.ts` serves it. */
const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: 'members',
    operationId: 'listTeamMembers',
    summary: 'Members and their roles',
    role: 'viewer',
    ok: [200, jsonResponse('The members.', ZListTeamMembersResponse)],
  },
  {
    method: 'post',
    path: 'invites',
    operationId: 'inviteTeamMember',
    summary: 'Invite by e-mail (a sign-in link that carries the invitation)',
    role: 'admin',
    body: ZTeamInviteRequest,
    ok: [201, jsonResponse('Mailed.', ZTeamInviteResponse)],
  },
  {
    method: 'post',
    path: 'members/role',
    operationId: 'setTeamMemberRole',
    summary: "Change a member's role",
    role: 'admin',
    body: ZTeamMemberRoleRequest,
    ok: [200, jsonResponse('The role now.', ZTeamMemberRoleResponse)],
    errors: ['team_member_not_found'],
  },
  {
    method: 'post',
    path: 'members/remove',
    operationId: 'removeTeamMember',
    summary: 'Remove a member',
    role: 'admin',
    body: ZTeamMemberRequest,
    ok: noContent('Removed.'),
    errors: ['team_member_not_found'],
  },
  {
    method: 'post',
    path: 'leave',
    operationId: 'leaveTeam',
    summary: 'Leave the team (not the owner)',
    role: 'viewer',
    ok: noContent('Left.'),
  },
  {
    method: 'post',
    path: 'transfer',
    operationId: 'transferTeamOwnership',
    summary: 'Hand ownership to a member (the owner becomes admin)',
    role: 'owner',
    body: ZTeamMemberRequest,
    ok: [200, jsonResponse('The new owner.', ZTeamTransferResponse)],
    errors: ['team_member_not_found'],
  },
  {
    method: 'get',
    path: 'api-keys',
    operationId: 'listTeamApiKeys',
    summary: "The team's API keys with their rules",
    role: 'viewer',
    ok: [200, jsonResponse('The keys.', ZListApiKeysResponse)],
  },
  {
    method: 'post',
    path: 'api-keys',
    operationId: 'createTeamApiKey',
    summary: 'Create a team key (its usage is billed to the team); the plaintext is shown once',
    role: 'member',
    body: ZCreateApiKeyRequest,
    ok: [201, jsonResponse('The key, once.', ZCreateApiKeyResponse)],
    errors: ['maximum_team_keys'],
  },
  {
    method: 'post',
    path: 'api-keys/revoke',
    operationId: 'revokeTeamApiKey',
    summary: 'Revoke a team key at once',
    role: 'member',
    body: ZRevokeApiKeyRequest,
    ok: [200, jsonResponse('Revoked.', ZRevokeApiKeyResponse)],
    errors: ['api_key_not_found'],
  },
  {
    method: 'post',
    path: 'api-keys/rules',
    operationId: 'setTeamApiKeyRules',
    summary: "Replace a team key's rules and expiry (null clears)",
    role: 'member',
    body: ZUpdateApiKeyRulesRequest,
    ok: [200, jsonResponse('The rules in force.', ZUpdateApiKeyRulesResponse)],
    errors: ['api_key_not_found'],
  },
  {
    method: 'get',
    path: 'budgets',
    operationId: 'listTeamBudgets',
    summary: "The team's budgets with their use, and today's tokens",
    role: 'viewer',
    ok: [200, jsonResponse('Budgets.', ZTeamBudgetsResponse)],
  },
  {
    method: 'put',
    path: 'budgets',
    operationId: 'setTeamBudget',
    summary: 'Set a team budget (the kinds of PUT /api/v1/budgets)',
    role: 'admin',
    body: ZSetBudgetRequest,
    ok: [200, jsonResponse('The budget set.', ZSetBudgetRequest)],
    errors: ['api_key_not_found'],
  },
  {
    method: 'delete',
    path: 'budgets',
    operationId: 'deleteTeamBudget',
    summary: 'Remove a team budget (the server default, if any, applies again)',
    role: 'admin',
    query: ZBudgetId,
    ok: noContent('Removed.'),
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: 'usage',
    operationId: 'getTeamUsage',
    summary: "The team's usage and cost per project and day",
    role: 'viewer',
    query: ZUsageQuery,
    ok: [200, jsonResponse('Usage rows of the team.', ZUsageResponse)],
  },
  {
    method: 'get',
    path: 'provider-keys',
    operationId: 'listTeamProviderKeys',
    summary: "The team's stored provider keys (provider and last four characters)",
    role: 'viewer',
    ok: [200, jsonResponse('Stored keys.', ZListProviderKeysResponse)],
  },
  {
    method: 'post',
    path: 'provider-keys',
    operationId: 'storeTeamProviderKey',
    summary: 'Store a provider key for the team (bring your own key)',
    role: 'admin',
    body: ZStoreProviderKeyRequest,
    ok: [201, jsonResponse('Stored.', ZStoredProviderKey)],
  },
  {
    method: 'delete',
    path: 'provider-keys/{provider}',
    operationId: 'deleteTeamProviderKey',
    summary: "Delete the team's stored key of a provider",
    role: 'admin',
    params: ZProviderKeyParams,
    ok: noContent('Deleted.'),
    errors: ['provider_key_not_found'],
  },
  {
    method: 'get',
    path: 'audit',
    operationId: 'listTeamAudit',
    summary: "The team's audit log, the 500 newest events",
    role: 'admin',
    ok: [200, jsonResponse('Events, newest first.', ZTeamAuditResponse)],
  },
  {
    method: 'get',
    path: 'request-log',
    operationId: 'searchTeamRequestLog',
    summary: "The team's AI requests (its keys'), newest first, filtered as GET /api/v1/request-log",
    role: 'viewer',
    query: ZRequestLogQuery,
    ok: [200, jsonResponse('A page of requests.', ZRequestLogResponse)],
  },
  {
    method: 'get',
    path: 'request-log/{id}',
    operationId: 'getTeamRequestLogEntry',
    summary: 'One team request with its attempts; captured content for admins and the owner only',
    role: 'viewer',
    params: z.object({ id: z.uuid().meta({ description: 'The request id.' }) }),
    ok: [200, jsonResponse('The request.', ZRequestLogDetail)],
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: 'project-settings',
    operationId: 'listTeamProjectSettings',
    summary: "The team's projects with settings other than the defaults",
    role: 'viewer',
    ok: [200, jsonResponse('Stored settings, by project id.', ZListProjectSettingsResponse)],
  },
  {
    method: 'put',
    path: 'project-settings',
    operationId: 'setTeamProjectSettings',
    summary: "Turn prompt and answer capture on or off for one of the team's projects",
    role: 'admin',
    body: ZSetProjectSettingsRequest,
    ok: [200, jsonResponse('The project settings now in force.', ZProjectSettings)],
  },
];

/** The paths of `/api/v1/teams`. */
export function registerTeamPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/teams',
    operationId: 'createTeam',
    summary: 'Create a team; the caller becomes its owner',
    tags: [TEAMS_TAG.name],
    security: SESSION,
    request: { body: jsonBody(ZCreateTeamRequest) },
    responses: {
      201: jsonResponse('The team.', ZTeamSummary),
      ...buildErrorResponses(WRITE_ERRORS.filter((c) => c !== 'team_not_found' && c !== 'forbidden')),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/v1/teams',
    operationId: 'listTeams',
    summary: "The caller's teams, role, permissions and billing user id",
    tags: [TEAMS_TAG.name],
    security: SESSION,
    responses: {
      200: jsonResponse('Teams.', ZListTeamsResponse),
      ...buildErrorResponses(['missing_authentication', 'internal']),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/v1/teams/invites/accept',
    operationId: 'acceptTeamInvite',
    summary: 'Accept an invitation with its token (a session of the invited address)',
    tags: [TEAMS_TAG.name],
    security: SESSION,
    request: { body: jsonBody(ZAcceptTeamInviteRequest) },
    responses: {
      200: jsonResponse('Joined.', ZAcceptTeamInviteResponse),
      ...buildErrorResponses([
        'missing_authentication',
        'csrf_origin',
        'validation_failed',
        'deserialization_error',
        'invalid_invite',
        'internal',
      ]),
    },
  });
  for (const op of OPERATIONS) {
    const [status, ok] = op.ok;
    registry.registerPath({
      method: op.method,
      path: `/api/v1/teams/{teamId}/${op.path}`,
      operationId: op.operationId,
      summary: op.summary,
      description: `Needs the role ${op.role} or above in the team; a non-member gets 404 \`team not found\`.`,
      tags: [TEAMS_TAG.name],
      security: SESSION,
      request: {
        params: op.params ? ZTeamPath.extend(op.params.shape) : ZTeamPath,
        ...(op.body ? { body: jsonBody(op.body) } : {}),
        ...(op.query ? { query: op.query } : {}),
      },
      responses: {
        [status]: ok,
        ...buildErrorResponses([...(op.method === 'get' ? READ_ERRORS : WRITE_ERRORS), ...(op.errors ?? [])]),
      },
    });
  }
}
