import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeyValueStore } from '@platform/db';
import { AppError } from '@platform/errors';
import type { Request, Response } from 'express';
import { readCookie } from '../auth/cookies';
import type { GatewayEnv } from '../env';

/** How long a started sign-in may take at the provider. */
export const FLOW_TTL_MS = 10 * 60 * 1000;
/** The cookie that ties a sign-in's state to the browser that started it (login CSRF). */
export const FLOW_COOKIE = 'gw_sso_state';

/**
 * The cookie's Path: the SSO routes under GATEWAY_PUBLIC_URL's own path, so it
 * also works when the gateway sits under a path prefix behind a proxy.
 */
function cookiePath(env: Pick<GatewayEnv, 'GATEWAY_PUBLIC_URL'>): string {
  return `${new URL(env.GATEWAY_PUBLIC_URL).pathname.replace(/\/+$/, '')}/api/v1/auth/sso`;
}
const STATE_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;

/** What the store keeps for a started sign-in, under the state's hash (never the state itself). */
export type FlowRecord = { nonce: string; verifier: string; redirectUrl: string | null };

const keyOf = (state: string) => `sso:flow:${createHash('sha256').update(state, 'utf8').digest('hex')}`;

/** Stores the flow's nonce and PKCE verifier server-side and sets the binding cookie. */
export async function rememberFlow(
  deps: { kv: KeyValueStore; env: Pick<GatewayEnv, 'SESSION_COOKIE_SECURE' | 'GATEWAY_PUBLIC_URL'> },
  res: Response,
  state: string,
  record: FlowRecord,
): Promise<void> {
  await deps.kv.set(keyOf(state), JSON.stringify(record), FLOW_TTL_MS);
  // Lax: the provider's redirect back is a top-level GET navigation, which carries it.
  res.cookie(FLOW_COOKIE, state, {
    httpOnly: true,
    sameSite: 'lax',
    path: cookiePath(deps.env),
    maxAge: FLOW_TTL_MS,
    secure: deps.env.SESSION_COOKIE_SECURE,
  });
}

function sameState(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}

/**
 * Takes the flow of the callback's `state` exactly once (atomic get-and-delete):
 * the state must be well formed, equal to this browser's binding cookie, and
 * stored (not used, not expired). Otherwise 400 `sso_invalid_state`. Clears the cookie.
 */
export async function takeFlow(
  deps: { kv: KeyValueStore; env: Pick<GatewayEnv, 'SESSION_COOKIE_SECURE' | 'GATEWAY_PUBLIC_URL'> },
  req: Request,
  res: Response,
  state: unknown,
): Promise<{ state: string; record: FlowRecord }> {
  const cookie = readCookie(req, FLOW_COOKIE);
  res.clearCookie(FLOW_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    path: cookiePath(deps.env),
    secure: deps.env.SESSION_COOKIE_SECURE,
  });
  if (typeof state !== 'string' || !STATE_SHAPE.test(state)) throw invalidState('malformed or missing');
  if (cookie === undefined || !sameState(cookie, state)) {
    throw invalidState('not the state this browser started the sign-in with');
  }
  const raw = await deps.kv.getDel(keyOf(state));
  if (raw === null) throw invalidState('unknown, used or expired');
  return { state, record: JSON.parse(raw) as FlowRecord };
}

function invalidState(message: string): AppError {
  return new AppError('sso_invalid_state', { details: [{ path: 'state', message }] });
}
