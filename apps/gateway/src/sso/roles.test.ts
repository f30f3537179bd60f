import type { SsoConfig } from '../env-sso';
import { mappedRoles } from './roles';

// OIDC_ROLE_MAP applied to an ID token's claims, without a database.

const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';

const config = (over: Partial<SsoConfig> = {}) =>
  ({
    roleClaim: 'groups',
    roleMap: [
      { value: 'eng', teamId: T1, role: 'member' },
      { value: 'leads', teamId: T1, role: 'admin' },
      { value: 'auditors', teamId: T1, role: 'viewer' },
      { value: 'ops', teamId: T2, role: 'viewer' },
    ],
    ...over,
  }) as SsoConfig;

describe('mappedRoles', () => {
  it('maps each matching claim value to its team and role', () => {
    expect(Object.fromEntries(mappedRoles(config(), { groups: ['eng', 'ops'] }))).toEqual({
      [T1]: 'member',
      [T2]: 'viewer',
    });
  });

  it('keeps the most powerful role per team, whatever the order', () => {
    expect(mappedRoles(config(), { groups: ['auditors', 'leads', 'eng'] }).get(T1)).toBe('admin');
    expect(mappedRoles(config(), { groups: ['eng', 'auditors'] }).get(T1)).toBe('member');
  });

  it('a claim that is a single string is one value', () => {
    expect(mappedRoles(config(), { groups: 'ops' }).get(T2)).toBe('viewer');
  });

  it('non-string values and unmapped values are ignored', () => {
    expect(mappedRoles(config(), { groups: [42, { eng: true }, 'nobody'] }).size).toBe(0);
    expect(mappedRoles(config(), {}).size).toBe(0);
  });

  it('nothing is mapped without a role claim or a role map', () => {
    expect(mappedRoles(config({ roleClaim: undefined }), { groups: ['eng'] }).size).toBe(0);
    expect(mappedRoles(config({ roleMap: [] }), { groups: ['eng'] }).size).toBe(0);
  });

  it('looks only at the first 1000 values of a huge claim', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `g${i}`);
    expect(mappedRoles(config(), { groups: [...many, 'eng'] }).size).toBe(0);
    expect(mappedRoles(config(), { groups: [...many.slice(1), 'eng'] }).get(T1)).toBe('member');
  });
});
