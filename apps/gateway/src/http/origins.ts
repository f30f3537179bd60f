import type { GatewayEnv } from '../env';

type OriginEnv = Pick<GatewayEnv, 'GATEWAY_PUBLIC_URL' | 'GATEWAY_CORS_ORIGINS'>;

/** `scheme://host[:port]` of a URL, or undefined when it does not parse. */
export function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** Cross-origin browser clients allowed by the operator (GATEWAY_CORS_ORIGINS). */
export function corsOrigins(env: Pick<GatewayEnv, 'GATEWAY_CORS_ORIGINS'>): Set<string> {
  const out = new Set<string>();
  for (const entry of env.GATEWAY_CORS_ORIGINS) {
    const origin = originOf(entry);
    if (origin) out.add(origin);
  }
  return out;
}

/**
 * Origins trusted for session-authenticated writes and for magic-link
 * redirect_url: the gateway's own public origin plus the CORS allowlist.
 */
export function trustedOrigins(env: OriginEnv): Set<string> {
  const out = corsOrigins(env);
  const own = originOf(env.GATEWAY_PUBLIC_URL);
  if (own) out.add(own);
  return out;
}
