import type { z } from 'zod';
import {
  checkSsoEnv,
  domainOf,
  mustUseSso,
  parseRoleMapEntry,
  SSO_CALLBACK_PATH,
  ssoConfigOf,
} from './env-sso';

// OIDC_* parsing and cross-field rules, without a provider.

const TEAM = '0b9f3c1e-6c1a-4c55-9a4e-2f0d1b7e8a90';

type Env = Parameters<typeof checkSsoEnv>[0];
const base = (over: Partial<Env> = {}): Env => ({
  NODE_ENV: 'test',
  OIDC_ISSUER: undefined,
  OIDC_CLIENT_ID: undefined,
  OIDC_CLIENT_SECRET: undefined,
  OIDC_REDIRECT_URI: undefined,
  OIDC_SCOPES: 'openid email profile',
  OIDC_ALLOWED_DOMAINS: [],
  OIDC_MAGIC_LINK_FALLBACK: false,
  OIDC_ROLE_CLAIM: undefined,
  OIDC_ROLE_MAP: [],
  ...over,
});

/** The issues checkSsoEnv raises, as `path: message`. */
function issues(env: Env): string[] {
  const out: string[] = [];
  const ctx = {
    addIssue: (i: { path: string[]; message: string }) => out.push(`${i.path[0]}: ${i.message}`),
  };
  checkSsoEnv(env, ctx as unknown as z.RefinementCtx);
  return out;
}

const on = (over: Partial<Env> = {}) =>
  base({
    OIDC_ISSUER: 'https://idp.example.com',
    OIDC_CLIENT_ID: 'client',
    OIDC_CLIENT_SECRET: 'secret',
    OIDC_ALLOWED_DOMAINS: ['example.com'],
    ...over,
  });

describe('parseRoleMapEntry', () => {
  it('splits value=team:role and trims both sides', () => {
    expect(parseRoleMapEntry(` eng = ${TEAM}:admin `)).toEqual({ value: 'eng', teamId: TEAM, role: 'admin' });
  });

  it('splits at the last =, so a claim value may contain =', () => {
    expect(parseRoleMapEntry(`cn=eng,ou=x=${TEAM}:viewer`)).toEqual({
      value: 'cn=eng,ou=x',
      teamId: TEAM,
      role: 'viewer',
    });
  });

  it('refuses the owner role: SSO cannot hand out ownership', () => {
    expect(parseRoleMapEntry(`eng=${TEAM}:owner`)).toBeUndefined();
  });

  it('refuses an entry without a value, without =, or with an unknown role', () => {
    expect(parseRoleMapEntry(`=${TEAM}:member`)).toBeUndefined();
    expect(parseRoleMapEntry(`${TEAM}:member`)).toBeUndefined();
    expect(parseRoleMapEntry(`eng=${TEAM}:root`)).toBeUndefined();
  });

  it('refuses a team id that is not 36 hex-and-dash characters', () => {
    expect(parseRoleMapEntry('eng=team-one:member')).toBeUndefined();
    expect(parseRoleMapEntry(`eng=${TEAM}x:member`)).toBeUndefined();
  });
});

describe('checkSsoEnv', () => {
  it('SSO off and nothing set: no issues', () => {
    expect(issues(base())).toEqual([]);
  });

  it('a complete https configuration passes, also in production', () => {
    expect(issues(on({ NODE_ENV: 'production' }))).toEqual([]);
  });

  it('an issuer without client id, secret or domains names each missing variable', () => {
    expect(issues(base({ OIDC_ISSUER: 'https://idp.example.com' }))).toEqual([
      'OIDC_CLIENT_ID: required when OIDC_ISSUER is set',
      'OIDC_CLIENT_SECRET: required when OIDC_ISSUER is set',
      'OIDC_ALLOWED_DOMAINS: required when OIDC_ISSUER is set',
    ]);
  });

  it('an http issuer is refused in production only', () => {
    expect(issues(on({ OIDC_ISSUER: 'http://idp.local' }))).toEqual([]);
    expect(issues(on({ OIDC_ISSUER: 'http://idp.local', NODE_ENV: 'production' }))).toEqual([
      'OIDC_ISSUER: must be https:// in production',
    ]);
  });

  it('a role map needs a role claim', () => {
    expect(issues(on({ OIDC_ROLE_MAP: [`eng=${TEAM}:member`] }))).toEqual([
      'OIDC_ROLE_CLAIM: required with OIDC_ROLE_MAP',
    ]);
    expect(issues(on({ OIDC_ROLE_MAP: [`eng=${TEAM}:member`], OIDC_ROLE_CLAIM: 'groups' }))).toEqual([]);
  });

  it('a malformed role map entry is named even while SSO is off', () => {
    expect(issues(base({ OIDC_ROLE_MAP: ['eng=nope'] }))).toEqual([
      'OIDC_ROLE_MAP: "eng=nope" is not claim value=team id:role',
    ]);
  });

  it('domains must be lower-case DNS names with a dot', () => {
    expect(issues(base({ OIDC_ALLOWED_DOMAINS: ['Example.com', 'localhost', 'a-b.example.co'] }))).toEqual([
      'OIDC_ALLOWED_DOMAINS: "Example.com" is not a lower-case domain',
      'OIDC_ALLOWED_DOMAINS: "localhost" is not a lower-case domain',
    ]);
  });

  it('a label may not start or end with a dash', () => {
    expect(issues(base({ OIDC_ALLOWED_DOMAINS: ['-a.example.com', 'a-.example.com'] }))).toHaveLength(2);
  });
});

describe('ssoConfigOf', () => {
  const env = (over: Partial<Env> = {}) => ({ ...on(over), GATEWAY_PUBLIC_URL: 'https://gw.example.com/' });

  it('is null while SSO is off or half configured', () => {
    expect(ssoConfigOf({ ...base(), GATEWAY_PUBLIC_URL: 'https://gw.example.com' })).toBeNull();
    expect(ssoConfigOf(env({ OIDC_CLIENT_SECRET: undefined }))).toBeNull();
  });

  it('defaults the redirect URI to the public URL plus the callback path, without a double slash', () => {
    expect(ssoConfigOf(env())?.redirectUri).toBe(`https://gw.example.com${SSO_CALLBACK_PATH}`);
    expect(ssoConfigOf(env({ OIDC_REDIRECT_URI: 'https://x.example.com/cb' }))?.redirectUri).toBe(
      'https://x.example.com/cb',
    );
  });

  it('parses the role map, dropping entries that do not parse', () => {
    const config = ssoConfigOf(
      env({ OIDC_ROLE_CLAIM: 'groups', OIDC_ROLE_MAP: [`eng=${TEAM}:member`, 'bad'] }),
    );
    expect(config?.roleMap).toEqual([{ value: 'eng', teamId: TEAM, role: 'member' }]);
    expect(config?.allowedDomains.has('example.com')).toBe(true);
  });

  it('reads an env object once', () => {
    const e = env();
    expect(ssoConfigOf(e)).toBe(ssoConfigOf(e));
  });
});

describe('domainOf and mustUseSso', () => {
  const env = (over: Partial<Env> = {}) => ({ ...on(over), GATEWAY_PUBLIC_URL: 'https://gw.example.com' });

  it('domainOf takes the part after the last @, lower-cased', () => {
    expect(domainOf('"a@b"@Example.COM')).toBe('example.com');
  });

  it('an allowed domain must use SSO, another need not', () => {
    expect(mustUseSso(env(), 'ann@EXAMPLE.com')).toBe(true);
    expect(mustUseSso(env(), 'ann@other.com')).toBe(false);
  });

  it('the magic-link fallback or SSO off lets everyone use the link', () => {
    expect(mustUseSso(env({ OIDC_MAGIC_LINK_FALLBACK: true }), 'ann@example.com')).toBe(false);
    expect(mustUseSso({ ...base(), GATEWAY_PUBLIC_URL: 'https://gw.example.com' }, 'ann@example.com')).toBe(
      false,
    );
  });
});
