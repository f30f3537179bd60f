import {
  MAGIC_LINK_SENT_MESSAGE,
  type RequestMagicLinkResponse,
  type SessionResponse,
  type VerifyCodeResponse,
  ZRequestMagicLinkRequest,
  ZVerifyCodeRequest,
} from '@platform/contract';
import { AppError, isAppError } from '@platform/errors';
import { consumeLimit, countHit, jsonBody, parseRequestPart, rateLimited } from '@platform/service-kit';
import express, { type Request, Router } from 'express';
import { assertTrustedOrigin } from '../http/csrf';
import { trustedOrigins } from '../http/origins';
import type { Mailer } from '../mail/mailer';
import { upsertUserByEmail } from '../users/repo';
import { authenticate, requireAuthOf } from './api-key-auth';
import { readCookie } from './cookies';
import type { AuthDeps } from './deps';
import { readLinkState } from './link-state';
import { consumeMagicCode, hashCode, isTrustedRedirect, requestMagicLink } from './magic-link';
import { sendBadLinkPage, sendConfirmPage, sendSignedInPage } from './pages';
import { endSession, type SessionDeps, startSession } from './sessions';
import { SIGN_IN_LIMITS } from './sign-in-limits';

const CODE_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;
const STATE_SHAPE = /^[A-Za-z0-9_.-]{1,4096}$/;

function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** Sign-in, session and logout routes, mounted under /api/v1. */
export function createAuthRouter(deps: AuthDeps, mailer: Mailer): Router {
  const router = Router();
  const sessionDeps: SessionDeps = { env: deps.env, prisma: deps.prisma, clock: deps.clock };
  const allowedOrigins = trustedOrigins(deps.env);
  // Relative to the public URL, so it also works when the gateway sits under a path prefix.
  const verifyAction = new URL(`${deps.env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}/api/v1/auth/verify-code`)
    .pathname;
  const json = jsonBody('16kb');
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });

  router.post('/auth/request-magic-link', json, async (req, res) => {
    const body = parseRequestPart(ZRequestMagicLinkRequest, req.body);
    await requestMagicLink(deps, mailer, {
      email: body.email,
      redirectUrl: body.redirect_url,
      ip: clientIp(req),
    });
    res.status(202).json({ message: MAGIC_LINK_SENT_MESSAGE } satisfies RequestMagicLinkResponse);
  });

  router.get('/auth/magic-link', (req, res) => {
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    const state = typeof req.query.state === 'string' ? req.query.state : undefined;
    if (!CODE_SHAPE.test(code) || (state !== undefined && !STATE_SHAPE.test(state))) {
      sendBadLinkPage(res);
      return;
    }
    sendConfirmPage(res, { code, state, action: verifyAction, formTargets: [...allowedOrigins] });
  });

  router.post('/auth/verify-code', json, form, async (req, res) => {
    // Login CSRF: a browser always sends Origin on POST, so a foreign one is refused;
    // clients without Origin (curl, servers) are not browsers and carry no ambient cookie.
    if (req.headers.origin !== undefined) assertTrustedOrigin(req, allowedOrigins);
    const ip = clientIp(req);
    const isForm = req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    const body = parseRequestPart(ZVerifyCodeRequest, req.body);
    await consumeLimit(deps.kv, SIGN_IN_LIMITS.verifyPerCode, hashCode(body.code));
    let consumed: Awaited<ReturnType<typeof consumeMagicCode>>;
    try {
      consumed = await consumeMagicCode(deps, body.code);
    } catch (err) {
      // Only failures count against the address, and a valid code is never refused for them.
      if (isAppError(err) && err.code === 'invalid_code') {
        const { total, resetMs } = await countHit(deps.kv, SIGN_IN_LIMITS.failedVerifyPerIp, ip);
        if (total > SIGN_IN_LIMITS.failedVerifyPerIp.max) throw rateLimited(resetMs);
      }
      throw err;
    }
    const user = await upsertUserByEmail(deps.prisma, consumed.email);
    const { expiresAt } = await startSession(sessionDeps, res, user.id, req.headers['user-agent']);
    if (isForm) {
      const rawState = (req.body as { state?: unknown }).state;
      const redirect =
        typeof rawState === 'string'
          ? await readLinkState(deps.env.GATEWAY_SECRET, rawState, {
              codeHash: consumed.codeHash,
              now: deps.clock(),
            })
          : undefined;
      if (redirect !== undefined && isTrustedRedirect(deps, redirect)) res.redirect(303, redirect);
      else sendSignedInPage(res);
      return;
    }
    res.json({
      user: { id: user.id, email: user.email, created_at: user.createdAt.toISOString() },
      session: { expires_at: expiresAt.toISOString() },
    } satisfies VerifyCodeResponse);
  });

  router.get('/auth/session', authenticate(deps, { allow: ['session'] }), (_req, res) => {
    const auth = requireAuthOf(res);
    if (auth.kind !== 'session') throw new AppError('missing_authentication');
    res.json({
      user_id: auth.userId,
      email: auth.email,
      expires_at: auth.expiresAt.toISOString(),
      created_at: auth.createdAt.toISOString(),
    } satisfies SessionResponse);
  });

  router.post('/auth/logout', async (req, res) => {
    // Only a request that carries the cookie can change anything, so only it needs the Origin check.
    if (readCookie(req, deps.env.SESSION_COOKIE_NAME) !== undefined) assertTrustedOrigin(req, allowedOrigins);
    await endSession(sessionDeps, req, res);
    res.json({ logged_out: true });
  });

  return router;
}
