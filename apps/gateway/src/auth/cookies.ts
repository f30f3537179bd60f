import type { Request, Response } from 'express';
import type { GatewayEnv } from '../env';

type CookieEnv = Pick<GatewayEnv, 'SESSION_COOKIE_NAME' | 'SESSION_COOKIE_SECURE'>;

/** The value of one cookie from the Cookie header, without parsing the others. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/**
 * HttpOnly (no script access), SameSite=Lax (not sent on cross-site
 * subrequests), Path=/, Max-Age and Expires, Secure unless explicitly switched
 * off for local http.
 */
export function setSessionCookie(res: Response, env: CookieEnv, token: string, maxAgeMs: number): void {
  res.cookie(env.SESSION_COOKIE_NAME, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    maxAge: maxAgeMs,
    secure: env.SESSION_COOKIE_SECURE,
  });
}

export function clearSessionCookie(res: Response, env: CookieEnv): void {
  res.clearCookie(env.SESSION_COOKIE_NAME, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: env.SESSION_COOKIE_SECURE,
  });
}
