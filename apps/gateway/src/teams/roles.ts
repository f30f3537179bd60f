/** Team roles, most to least powerful. */
export const TEAM_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

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
  'keys.write': 'member',
  'members.invite': 'admin',
  'members.role': 'admin',
  'members.remove': 'admin',
  'budgets.write': 'admin',
  'provider_keys.write': 'admin',
  'audit.read': 'admin',
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

/** Whether `role` may give or take `target` (an admin manages members and viewers, only the owner admins). */
export function canManage(role: TeamRole, target: TeamRole): boolean {
  if (target === 'owner') return false;
  return role === 'owner' || rank(role) > rank(target);
}
