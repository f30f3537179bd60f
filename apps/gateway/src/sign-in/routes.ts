import {
  MAGIC_LINK_SENT_MESSAGE,
  type RequestMagicLinkResponse,
  type VerifyCodeResponse,
  ZRequestMagicLinkRequest,
  ZVerifyCodeRequest,
} from '@platform/contract';
import { isAppError } from '@platform/errors';
import { consumeLimit, countHit, jsonBody, parseRequestPart, rateLimited } from '@platform/service-kit';
import express, { type Request, Router } from 'express';
import { recordAudit } from '../audit/record';
import { assertTrustedOrigin } from '../auth/csrf';
import type { AuthDeps } from '../auth/deps';
import { type SessionDeps, startSession } from '../auth/sessions';
import { mustUseSso } from '../env-sso';
import { trustedOrigins } from '../http/origins';
import type { Mailer } from '../mail/mailer';
import { upsertUserByEmail } from '../users/repo';
import { SIGN_IN_LIMITS } from './limits';
import { readLinkState } from './link-state';
import {
  consumeMagicCode,
  hashCode,
  isTrustedRedirect,
  rememberSignInAddress,
  requestMagicLink,
  ssoRequired,
} from './magic-link';
import { sendBadLinkPage, sendConfirmPage, sendSignedInPage } from './pages';

const CODE_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;
const STATE_SHAPE = /^[A-Za-z0-9_.-]{1,4096}$/;

function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Sign-in: request a magic link, its confirm page, and verify-code (which starts the session).
 *
 * Over 80 lines: the sign-in path list in one place, each route a few lines.
 */
export function createSignInRouter(deps: AuthDeps, mailer: Mailer): Router {
  const router = Router();
  const sessionDeps: SessionDeps = { env: deps.env, prisma: deps.prisma, clock: deps.clock };
  const allowedOrigins = trustedOrigins(deps.env);
  // Relative to the public URL, so it also works when the gateway sits under a path prefix.
  const verifyAction = new URL(`${deps.env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}/api/v1/auth/verify-code`)
    .pathname;
  const json = jsonBody('16kb');
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });

  router.post('/api/v1/auth/request-magic-link', json, async (req, res) => {
    const body = parseRequestPart(ZRequestMagicLinkRequest, req.body);
    await requestMagicLink(deps, mailer, {
      email: body.email,
      redirectUrl: body.redirect_url,
      ip: clientIp(req),
    });
    res.status(202).json({ message: MAGIC_LINK_SENT_MESSAGE } satisfies RequestMagicLinkResponse);
  });

  router.get('/api/v1/auth/magic-link', (req, res) => {
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    const state = typeof req.query.state === 'string' ? req.query.state : undefined;
    if (!CODE_SHAPE.test(code) || (state !== undefined && !STATE_SHAPE.test(state))) {
      sendBadLinkPage(res);
      return;
    }
    sendConfirmPage(res, { code, state, action: verifyAction, formTargets: [...allowedOrigins] });
  });

  router.post('/api/v1/auth/verify-code', json, form, async (req, res) => {
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
    // A code mailed before the domain was bound to SSO, or by a team invitation, signs nobody in there.
    if (mustUseSso(deps.env, consumed.email)) throw ssoRequired();
    const user = await upsertUserByEmail(deps.prisma, consumed.email);
    // Best effort: the code is spent already, so a store hiccup here must not fail the sign-in.
    await rememberSignInAddress(deps, consumed.email, ip).catch((err: unknown) =>
      deps.logger.warn({ err: { message: (err as Error)?.message } }, 'sign-in address not remembered'),
    );
    const { expiresAt } = await startSession(sessionDeps, res, user.id, req.headers['user-agent']);
    await recordAudit(
      deps,
      req,
      res,
      { action: 'sign_in.magic_link', ownerUserId: user.id },
      {
        actorUserId: user.id,
        actorKind: 'magic_link',
      },
    );
    if (isForm) {
      const rawState = (req.body as { state?: unknown }).state;
      const redirect =
        typeof rawState === 'string'
          ? await readLinkState(deps.env.GATEWAY_SECRET, rawState, {
              codeHash: consumed.codeHash,
              now: new Date(deps.clock()),
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

  return router;
}
