import type { GatewayEnv } from '../env';
import type { TeamRole } from '../teams/roles';
import { parseRoleMapEntry } from './env';

/** Where the provider sends the browser back, unless OIDC_REDIRECT_URI says otherwise. */
export const SSO_CALLBACK_PATH = '/api/v1/auth/sso/callback';
export const SSO_START_PATH = '/api/v1/auth/sso/start';

export type RoleMapping = { value: string; teamId: string; role: Exclude<TeamRole, 'owner'> };

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

const configs = new WeakMap<GatewayEnv, SsoConfig | null>();

/** The SSO settings of `env`, or null when OIDC_ISSUER is unset (SSO off). */
export function ssoConfigOf(env: GatewayEnv): SsoConfig | null {
  let config = configs.get(env);
  if (config === undefined) {
    config = readConfig(env);
    configs.set(env, config);
  }
  return config;
}

function readConfig(env: GatewayEnv): SsoConfig | null {
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
export function mustUseSso(env: GatewayEnv, email: string): boolean {
  const config = ssoConfigOf(env);
  return config !== null && !config.magicLinkFallback && config.allowedDomains.has(domainOf(email));
}
