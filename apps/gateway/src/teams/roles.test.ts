import { can, canManage, isTeamRole, permissionsOf, TEAM_PERMISSIONS, TEAM_ROLES } from './roles';

// The role table: each role may do what its rank allows, no more.

describe('team roles', () => {
  it('the roles are the contract list, owner first', () => {
    expect(TEAM_ROLES[0]).toBe('owner');
    expect(isTeamRole('admin')).toBe(true);
    expect(isTeamRole('superuser')).toBe(false);
  });

  it('a viewer reads and writes nothing; a member writes keys only', () => {
    expect(can('viewer', 'keys.read')).toBe(true);
    expect(can('viewer', 'keys.write')).toBe(false);
    expect(can('member', 'keys.write')).toBe(true);
    expect(can('member', 'budgets.write')).toBe(false);
    expect(can('member', 'audit.read')).toBe(false);
  });

  it('an admin manages members, budgets and keys but cannot transfer the team', () => {
    expect(can('admin', 'members.invite')).toBe(true);
    expect(can('admin', 'budgets.write')).toBe(true);
    expect(can('admin', 'audit.read')).toBe(true);
    expect(can('admin', 'team.transfer')).toBe(false);
    expect(can('owner', 'team.transfer')).toBe(true);
  });

  it('permissionsOf lists every action the role may do, and the owner may do all', () => {
    expect(permissionsOf('owner')).toEqual(Object.keys(TEAM_PERMISSIONS));
    expect(permissionsOf('viewer').every((a) => a.endsWith('.read') && a !== 'audit.read')).toBe(true);
    expect(permissionsOf('member')).toContain('keys.write');
  });

  it('an admin manages members and viewers; only the owner manages admins; nobody gives or takes owner', () => {
    expect(canManage('admin', 'member')).toBe(true);
    expect(canManage('admin', 'viewer')).toBe(true);
    expect(canManage('admin', 'admin')).toBe(false);
    expect(canManage('owner', 'admin')).toBe(true);
    expect(canManage('owner', 'owner')).toBe(false);
    expect(canManage('member', 'viewer')).toBe(true);
    expect(canManage('viewer', 'viewer')).toBe(false);
  });
});
