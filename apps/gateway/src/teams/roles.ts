import { TEAM_ROLES, type TeamRoleName } from '@platform/contract';

export { TEAM_ROLES };
/** Team roles, most to least powerful (the contract's list). */
export type TeamRole = TeamRoleName;

/**
 * What each team route needs: the least role allowed (docs/teams.md#roles,
 * where this table is reproduced). Every team route names one of these.
 */
export const TEAM_PERMISSIONS = {
  'team.read': 'viewer',
  'members.read': 'viewer',
  'keys.read': 'viewer',
  'budgets.read': 'viewer',
  'provider_keys.read': 'viewer',
  'usage.read': 'viewer',
  'request_log.read': 'viewer',
  'keys.write': 'member',
  'members.invite': 'admin',
  'members.role': 'admin',
  'members.remove': 'admin',
  'budgets.write': 'admin',
  'provider_keys.write': 'admin',
  'audit.read': 'admin',
  /** Also what reading a team request's captured prompt and answer takes. */
  'projects.write': 'admin',
  'team.transfer': 'owner',
} as const satisfies Record<string, TeamRole>;
export type TeamAction = keyof typeof TEAM_PERMISSIONS;

const rank = (role: TeamRole) => TEAM_ROLES.length - TEAM_ROLES.indexOf(role);

export function isTeamRole(value: string): value is TeamRole {
  return (TEAM_ROLES as readonly string[]).includes(value);
}

/** Whether `role` may do `action`. */
export function can(role: TeamRole, action: TeamAction): boolean {
  return rank(role) >= rank(TEAM_PERMISSIONS[action]);
}

/** Every action `role` may do, in the table's order (what `GET /api/v1/teams` tells the console). */
export function permissionsOf(role: TeamRole): TeamAction[] {
  return (Object.keys(TEAM_PERMISSIONS) as TeamAction[]).filter((action) => can(role, action));
}

/** Whether `role` may give or take `target` (an admin manages members and viewers, only the owner admins). */
export function canManage(role: TeamRole, target: TeamRole): boolean {
  if (target === 'owner') return false;
  return role === 'owner' || rank(role) > rank(target);
}
