import { TEAM_ROLES, type TeamRoleName } from '@platform/contract';
import { envFields } from '@platform/service-kit';
import { z } from 'zod';

/** A lower-case DNS name: labels of a-z 0-9 -, at least one dot. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/;
/** `claim value=team id:role` (docs/teams.md#single-sign-on). */
const ROLE_TARGET = new RegExp(`^[0-9a-f-]{36}:(${TEAM_ROLES.filter((r) => r !== 'owner').join('|')})$`);

/** Splits one OIDC_ROLE_MAP entry at its last `=`; undefined when it is not `value=team:role`. */
export function parseRoleMapEntry(
  entry: string,
): { value: string; teamId: string; role: 'admin' | 'member' | 'viewer' } | undefined {
  const eq = entry.lastIndexOf('=');
  if (eq < 1) return undefined;
  const target = entry.slice(eq + 1).trim();
  if (!ROLE_TARGET.test(target)) return undefined;
  const [teamId, role] = target.split(':') as [string, 'admin' | 'member' | 'viewer'];
  return { value: entry.slice(0, eq).trim(), teamId, role };
}

/**
 * OpenID Connect sign-in (docs/teams.md#single-sign-on, sso/). Off unless
 * OIDC_ISSUER is set; then the client, secret and allowed domains are required.
 */
export const SSO_ENV_FIELDS = {
  /** The provider's issuer URL (discovery at `<issuer>/.well-known/openid-configuration`); unset -> no SSO. */
  OIDC_ISSUER: envFields.urlOf(['http', 'https']).optional(),
  OIDC_CLIENT_ID: z.string().min(1).max(512).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  /** Registered at the provider; unset -> `<GATEWAY_PUBLIC_URL>/api/v1/auth/sso/callback`. */
  OIDC_REDIRECT_URI: envFields.urlOf(['http', 'https']).optional(),
  /** Scopes asked for; `openid` and `email` are needed (the e-mail claim names the user). */
  OIDC_SCOPES: z
    .string()
    .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, 'space-separated scopes')
    .default('openid email profile'),
  /**
   * E-mail domains that sign in through the provider (lower case, comma-separated).
   * An ID token for another domain is refused; these domains cannot use the magic link
   * unless OIDC_MAGIC_LINK_FALLBACK is true.
   */
  OIDC_ALLOWED_DOMAINS: envFields.list().default([]),
  /** Whether SSO-bound domains may still sign in by magic link (default: no). */
  OIDC_MAGIC_LINK_FALLBACK: envFields.bool(false),
  /** The ID-token claim (a string or an array of strings, e.g. `groups`) OIDC_ROLE_MAP reads. */
  OIDC_ROLE_CLAIM: z
    .string()
    .regex(/^[A-Za-z0-9_:./-]{1,128}$/)
    .optional(),
  /** `claim value=team id:role` comma-separated (role admin, member or viewer). */
  OIDC_ROLE_MAP: envFields.list().default([]),
};

type SsoEnv = z.infer<z.ZodObject<typeof SSO_ENV_FIELDS>>;

/** The cross-field rules of the SSO variables, for the env schema's superRefine. */
export function checkSsoEnv(env: SsoEnv & { NODE_ENV: string }, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  for (const entry of env.OIDC_ROLE_MAP) {
    if (!parseRoleMapEntry(entry)) issue('OIDC_ROLE_MAP', `"${entry}" is not claim value=team id:role`);
  }
  for (const domain of env.OIDC_ALLOWED_DOMAINS) {
    if (!DOMAIN.test(domain)) issue('OIDC_ALLOWED_DOMAINS', `"${domain}" is not a lower-case domain`);
  }
  if (!env.OIDC_ISSUER) return;
  for (const name of ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const) {
    if (!env[name]) issue(name, 'required when OIDC_ISSUER is set');
  }
  if (env.OIDC_ALLOWED_DOMAINS.length === 0)
    issue('OIDC_ALLOWED_DOMAINS', 'required when OIDC_ISSUER is set');
  if (env.OIDC_ROLE_MAP.length > 0 && !env.OIDC_ROLE_CLAIM)
    issue('OIDC_ROLE_CLAIM', 'required with OIDC_ROLE_MAP');
  if (env.NODE_ENV === 'production' && !env.OIDC_ISSUER.startsWith('https://')) {
    issue('OIDC_ISSUER', 'must be https:// in production');
  }
}

/** Where the provider sends the browser back, unless OIDC_REDIRECT_URI says otherwise. */
export const SSO_CALLBACK_PATH = '/api/v1/auth/sso/callback';
export const SSO_START_PATH = '/api/v1/auth/sso/start';

export type RoleMapping = { value: string; teamId: string; role: Exclude<TeamRoleName, 'owner'> };

/** The operator's SSO settings, read once from the environment. */
export type SsoConfig = {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scopes: string;
  allowedDomains: ReadonlySet<string>;
  magicLinkFallback: boolean;
  roleClaim: string | undefined;
  roleMap: readonly RoleMapping[];
};

/** The variables the SSO settings come from (a GatewayEnv, without importing env.ts). */
type SsoEnvValues = SsoEnv & { GATEWAY_PUBLIC_URL: string };

const configs = new WeakMap<SsoEnvValues, SsoConfig | null>();

/** The SSO settings of `env`, or null when OIDC_ISSUER is unset (SSO off). */
export function ssoConfigOf(env: SsoEnvValues): SsoConfig | null {
  let config = configs.get(env);
  if (config === undefined) {
    config = readConfig(env);
    configs.set(env, config);
  }
  return config;
}

function readConfig(env: SsoEnvValues): SsoConfig | null {
  if (!env.OIDC_ISSUER || !env.OIDC_CLIENT_ID || !env.OIDC_CLIENT_SECRET) return null;
  return {
    issuer: new URL(env.OIDC_ISSUER),
    clientId: env.OIDC_CLIENT_ID,
    clientSecret: env.OIDC_CLIENT_SECRET,
    redirectUri: env.OIDC_REDIRECT_URI ?? `${env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}${SSO_CALLBACK_PATH}`,
    scopes: env.OIDC_SCOPES,
    allowedDomains: new Set(env.OIDC_ALLOWED_DOMAINS),
    magicLinkFallback: env.OIDC_MAGIC_LINK_FALLBACK,
    roleClaim: env.OIDC_ROLE_CLAIM,
    roleMap: env.OIDC_ROLE_MAP.map(parseRoleMapEntry).filter((m) => m !== undefined),
  };
}

/** The part after the last `@`, lower-cased. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Whether `email` must sign in through SSO: its domain is one of
 * OIDC_ALLOWED_DOMAINS and the operator did not allow the magic link for them.
 */
export function mustUseSso(env: SsoEnvValues, email: string): boolean {
  const config = ssoConfigOf(env);
  return config !== null && !config.magicLinkFallback && config.allowedDomains.has(domainOf(email));
}
