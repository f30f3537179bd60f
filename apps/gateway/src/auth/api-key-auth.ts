import { AppError } from '@platform/errors';
import type { Clock } from '@platform/service-kit';
import type { Request, RequestHandler, Response } from 'express';
import { assertKeyLive } from '../key-rules/rules';
import type { ApiKeyVerifier } from './api-key-verifier';
import type { AuthDeps } from './deps';
import type { KeyGuessingGuard } from './key-guessing';
import { resolveSession } from './sessions';
import type { ApiKeyAuthContext, AuthContext } from './types';

export type { AuthDeps } from './deps';
export type { ApiKeyAuthContext, AuthContext, SessionAuthContext } from './types';
export { authOf } from './types';

/** Header values longer than this cannot be our keys; refusing them bounds the work. */
export const MAX_KEY_LENGTH = 256;

function apiKeyHeader(req: Request): string | undefined {
  const value = req.headers['x-api-key'];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const BEARER_PREFIX = 'bearer ';

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive, as RFC 9110 says). */
function bearerToken(req: Request): string | undefined {
  const value = req.headers.authorization;
  if (typeof value !== 'string' || value.length <= BEARER_PREFIX.length) return undefined;
  if (value.slice(0, BEARER_PREFIX.length).toLowerCase() !== BEARER_PREFIX) return undefined;
  const token = value.slice(BEARER_PREFIX.length).trim();
  return token === '' ? undefined : token;
}

/**
 * The answers around a key check: 503 when the store cannot say, 401 `invalid
 * api key` for an unknown or revoked one, 429 instead once its address sent too
 * many bad keys; a key that verifies passes whatever its address did. `check` is the lookup (`verify`, or admission/key-and-limits.ts's).
 */
export async function verifyApiKey(
  deps: { apiKeys: Pick<ApiKeyVerifier, 'verify'>; keyGuessing: KeyGuessingGuard; clock: Clock },
  req: Request,
  key: string,
  check: (key: string) => Promise<ApiKeyAuthContext | null> = (k) => deps.apiKeys.verify(k),
): Promise<ApiKeyAuthContext> {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const guard = deps.keyGuessing;
  let auth: ApiKeyAuthContext | null = null;
  if (key.length <= MAX_KEY_LENGTH) {
    try {
      auth = await check(key);
    } catch (cause) {
      // Fail closed but honestly: the store is down, the key is not necessarily bad.
      throw new AppError('service_unavailable', { cause });
    }
  }
  if (!auth) {
    await guard.failed(ip);
    throw new AppError('invalid_api_key');
  }
  // A known key past its expiry says so (the key's rule), rather than `invalid api key`.
  assertKeyLive(auth, deps.clock());
  return auth;
}

/** The key a request presents: `x-api-key`, and with `bearer` also `Authorization: Bearer <key>`. */
export function presentedApiKey(req: Request, opts: { bearer?: boolean }): string | undefined {
  return apiKeyHeader(req) ?? (opts.bearer ? bearerToken(req) : undefined);
}

/**
 * For endpoints that take only an API key (AI, stored keys): `x-api-key`, and
 * with `bearer` also `Authorization: Bearer <key>` (the OpenAI-compatible API;
 * `x-api-key` wins when both are sent). No key -> 401 `missing api key`;
 * unknown or revoked -> 401 `invalid api key`; else
 * `res.locals.auth = { kind: 'api_key', userId, apiKeyId, scope }`. The AI
 * routes use admission/ instead. No database
 * write happens here; see docs/gateway-auth.md for the caching.
 */
export function requireApiKey(
  deps: Pick<AuthDeps, 'apiKeys' | 'keyGuessing' | 'clock'>,
  opts: { bearer?: boolean } = {},
): RequestHandler {
  return async (req, res, next) => {
    const key = presentedApiKey(req, opts);
    if (!key) throw new AppError('missing_api_key');
    res.locals.auth = await verifyApiKey(deps, req, key);
    next();
  };
}

export type AuthMethodName = AuthContext['kind'];

/**
 * For endpoints that accept several credentials. An `x-api-key` header, when
 * allowed, is checked first and a bad one is refused (401 `invalid api key`)
 * rather than falling back to the cookie; with no usable credential the answer
 * is 401 `missing_authentication`.
 */
export function authenticate(deps: AuthDeps, opts: { allow: AuthMethodName[] }): RequestHandler {
  const allowKey = opts.allow.includes('api_key');
  const allowSession = opts.allow.includes('session');
  const sessionDeps = { env: deps.env, prisma: deps.prisma, clock: deps.clock };
  return async (req, res, next) => {
    const key = allowKey ? apiKeyHeader(req) : undefined;
    if (key) {
      res.locals.auth = await verifyApiKey(deps, req, key);
      next();
      return;
    }
    const session = allowSession ? await resolveSession(sessionDeps, req, res) : undefined;
    if (!session) throw new AppError('missing_authentication');
    res.locals.auth = session;
    next();
  };
}

/** Reads the context set by requireApiKey/authenticate; throws if the route forgot them. */
export function requireAuthOf(res: Response): AuthContext {
  const auth = res.locals.auth as AuthContext | undefined;
  if (!auth) throw new Error('route is missing its authentication middleware');
  return auth;
}
