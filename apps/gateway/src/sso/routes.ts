import { AppError } from '@platform/errors';
import { consumeLimit, type Limit } from '@platform/service-kit';
import { type Request, Router } from 'express';
import { recordAudit } from '../audit/record';
import type { AuthDeps } from '../auth/deps';
import { type SessionDeps, startSession } from '../auth/sessions';
import { domainOf, SSO_CALLBACK_PATH, SSO_START_PATH, ssoConfigOf } from '../env-sso';
import { originOf, trustedOrigins } from '../http/origins';
import { upsertUserByEmail } from '../users/repo';
import { createSsoClient, newFlowSecrets, type SsoClaims } from './client';
import { rememberFlow, takeFlow } from './flow-state';
import { applyMappedRoles, mappedRoles } from './roles';

/** Sign-ins started per client address: each holds a store entry for 10 minutes. */
const START_PER_IP: Limit = { name: 'sso:start:ip', max: 60, windowMs: 15 * 60 * 1000 };
const EMAIL_SHAPE = /^[^\s@]{1,200}@[^\s@]{1,253}$/;

function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** The signed-in address of verified claims, or the refusal naming why not. */
function emailOf(claims: SsoClaims, allowed: ReadonlySet<string>): string {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!EMAIL_SHAPE.test(email)) {
    throw new AppError('sso_failed', {
      details: [{ path: 'id_token.email', message: 'the ID token carries no e-mail address (scope email)' }],
    });
  }
  if (claims.email_verified === false) {
    throw new AppError('sso_failed', {
      details: [{ path: 'id_token.email_verified', message: 'the provider has not verified this address' }],
    });
  }
  if (!allowed.has(domainOf(email))) {
    throw new AppError('sso_domain_not_allowed', {
      details: [{ path: 'id_token.email', message: `${domainOf(email)} is not on OIDC_ALLOWED_DOMAINS` }],
    });
  }
  return email;
}

/**
 * OpenID Connect sign-in (docs/teams.md#single-sign-on): `start` sends the
 * browser to the provider with PKCE, state and nonce; `callback` redeems the
 * code, checks the ID token and the e-mail domain, and starts the same session
 * (cookie) as a magic link. Both are browser navigations (GET); the state,
 * bound to the browser by an HttpOnly cookie and usable once, is their CSRF
 * defence. Without OIDC_ISSUER both answer 404 `sso_not_configured`.
 */
export function createSsoRouter(deps: AuthDeps): Router {
  const router = Router();
  const config = ssoConfigOf(deps.env);
  if (!config) {
    router.get([SSO_START_PATH, SSO_CALLBACK_PATH], () => {
      throw new AppError('sso_not_configured');
    });
    return router;
  }
  const client = createSsoClient(config, deps.logger);
  const sessionDeps: SessionDeps = { env: deps.env, prisma: deps.prisma, clock: deps.clock };
  const home = `${deps.env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}/`;
  // Where redirect_url may point: the gateway's origin and GATEWAY_CORS_ORIGINS (as for magic links).
  const trusted = trustedOrigins(deps.env);

  router.get(SSO_START_PATH, async (req, res) => {
    const redirectUrl = typeof req.query.redirect_url === 'string' ? req.query.redirect_url : undefined;
    if (redirectUrl !== undefined && !trusted.has(originOf(redirectUrl) ?? '')) {
      throw new AppError('invalid_redirect_url');
    }
    await consumeLimit(deps.kv, START_PER_IP, clientIp(req));
    const secrets = await newFlowSecrets();
    const target = await client.authorizationUrl(secrets);
    await rememberFlow(deps, res, secrets.state, {
      nonce: secrets.nonce,
      verifier: secrets.verifier,
      redirectUrl: redirectUrl ?? null,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, target.href);
  });

  router.get(SSO_CALLBACK_PATH, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const { state, record } = await takeFlow(deps, req, res, req.query.state);
    // The URL the provider sent the browser to: the registered redirect URI with this query.
    const callbackUrl = new URL(config.redirectUri);
    callbackUrl.search = new URL(req.originalUrl, 'http://callback.invalid').search;
    const claims = await client.redeem(callbackUrl, {
      state,
      nonce: record.nonce,
      verifier: record.verifier,
    });
    const email = emailOf(claims, config.allowedDomains);
    const user = await upsertUserByEmail(deps.prisma, email);
    await applyMappedRoles(deps, req, res, user.id, mappedRoles(config, claims));
    await startSession(sessionDeps, res, user.id, req.headers['user-agent']);
    await recordAudit(
      deps,
      req,
      res,
      { action: 'sign_in.sso', ownerUserId: user.id, after: { issuer: claims.iss } },
      { actorUserId: user.id, actorKind: 'sso' },
    );
    res.redirect(303, record.redirectUrl ?? home);
  });

  return router;
}
