import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '@platform/service-kit';
import type { Request, Response } from 'express';
import type { GatewayEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import { clearSessionCookie, readCookie, setSessionCookie } from './cookies';
import { extendSession, findLiveSession, insertSession, revokeSessionByHash } from './session-repo';
import type { SessionAuthContext } from './types';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Expiry slides at most this often per session, so a busy session is not a write per request. */
const SLIDE_STEP_MS = 60 * 60 * 1000;
/** Longer cookie values are not ours; refuse them before hashing. */
const MAX_TOKEN_LENGTH = 128;

export type SessionDeps = {
  env: Pick<GatewayEnv, 'SESSION_COOKIE_NAME' | 'SESSION_COOKIE_SECURE' | 'SESSION_TTL_DAYS'>;
  prisma: PrismaClient;
  clock: Clock;
};

/** SHA-256 hex; the only form of a session token that is stored. */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function ttlMs(deps: SessionDeps): number {
  return deps.env.SESSION_TTL_DAYS * DAY_MS;
}

/** Creates a session for the user, sets its cookie and returns when it expires. */
export async function startSession(
  deps: SessionDeps,
  res: Response,
  userId: string,
  userAgent: string | undefined,
): Promise<{ expiresAt: Date }> {
  // 256 bits from the CSPRNG; opaque, so revoking the row revokes the session.
  const token = randomBytes(32).toString('base64url');
  const now = new Date(deps.clock());
  const expiresAt = new Date(now.getTime() + ttlMs(deps));
  await insertSession(deps.prisma, {
    userId,
    tokenHash: hashSessionToken(token),
    createdAt: now,
    expiresAt,
    userAgent: userAgent?.slice(0, 512) ?? null,
  });
  setSessionCookie(res, deps.env, token, ttlMs(deps));
  return { expiresAt };
}

/**
 * The live session of the request, or undefined. Expiry slides: once an hour
 * of the lifetime has been used, it is pushed back to a full lifetime and the
 * cookie re-issued with a fresh Max-Age.
 */
export async function resolveSession(
  deps: SessionDeps,
  req: Request,
  res: Response,
): Promise<SessionAuthContext | undefined> {
  const token = readCookie(req, deps.env.SESSION_COOKIE_NAME);
  if (!token || token.length > MAX_TOKEN_LENGTH) return undefined;
  const now = new Date(deps.clock());
  const row = await findLiveSession(deps.prisma, hashSessionToken(token), now);
  if (!row) return undefined;
  let expiresAt = row.expiresAt;
  if (expiresAt.getTime() - now.getTime() < ttlMs(deps) - SLIDE_STEP_MS) {
    expiresAt = new Date(now.getTime() + ttlMs(deps));
    await extendSession(deps.prisma, row.id, now, expiresAt);
    setSessionCookie(res, deps.env, token, ttlMs(deps));
  }
  return {
    kind: 'session',
    userId: row.userId,
    sessionId: row.id,
    email: row.email,
    createdAt: row.createdAt,
    expiresAt,
  };
}

/** Revokes the request's session if it has one and clears the cookie either way. */
export async function endSession(deps: SessionDeps, req: Request, res: Response): Promise<void> {
  const token = readCookie(req, deps.env.SESSION_COOKIE_NAME);
  if (token && token.length <= MAX_TOKEN_LENGTH) {
    await revokeSessionByHash(deps.prisma, hashSessionToken(token), new Date(deps.clock()));
  }
  clearSessionCookie(res, deps.env);
}
