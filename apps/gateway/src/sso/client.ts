import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { SsoConfig } from '../env-sso';

type OidcLib = typeof import('openid-client');
type OidcConfiguration = import('openid-client').Configuration;

let lib: Promise<OidcLib> | undefined;

/**
 * openid-client v6 is ESM-only; the gateway is CommonJS. A dynamic import at
 * the first SSO request loads it (Node's import(); under Jest, swc turns it into
 * a require of the transformed module, see jest.preset.js). A gateway without
 * OIDC_ISSUER never loads it.
 */
function loadOidc(): Promise<OidcLib> {
  lib ??= import('openid-client');
  return lib;
}

/** What the callback learns from a redeemed code: the ID token's verified claims. */
export type SsoClaims = Record<string, unknown> & { iss: string; sub: string };

export type SsoClient = {
  /** The provider's authorization URL for one sign-in (PKCE S256, state, nonce). */
  authorizationUrl(input: { state: string; nonce: string; verifier: string }): Promise<URL>;
  /**
   * Redeems the code of `callbackUrl` at the token endpoint and verifies the
   * ID token (signature, issuer, audience, expiry, nonce) and the response's
   * state and `iss`. Refusals are AppErrors: 400 `sso_failed`, 503 `sso_unavailable`.
   */
  redeem(callbackUrl: URL, expected: { state: string; nonce: string; verifier: string }): Promise<SsoClaims>;
};

/** Random values for one sign-in, from openid-client (CSPRNG, base64url). */
export async function newFlowSecrets(): Promise<{ state: string; nonce: string; verifier: string }> {
  const oidc = await loadOidc();
  return { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
}

/** The provider's error code, if it is one of OAuth's plain codes (never echo anything else). */
function oauthCode(value: unknown): string {
  return typeof value === 'string' && /^[a-z_]{1,64}$/.test(value) ? value : 'unknown';
}

/** Maps openid-client's errors to the gateway's contract; the message shown names the reason only. */
function refusalOf(err: unknown, logger: Logger): AppError {
  const e = err as { name?: string; code?: string; error?: unknown; cause?: { cause?: { claim?: unknown } } };
  const fail = (path: string, message: string) =>
    new AppError('sso_failed', { details: [{ path, message }], cause: err });
  if (e.name === 'ResponseBodyError') {
    return fail('code', `the provider refused the code (${oauthCode(e.error)}): used, expired or not ours`);
  }
  if (e.name === 'AuthorizationResponseError') {
    return fail('query', `the provider answered ${oauthCode(e.error)}`);
  }
  if (e.name === 'ClientError' && e.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
    const claim = e.cause?.cause?.claim;
    const name = typeof claim === 'string' && /^[a-z_]{1,16}$/.test(claim) ? claim : 'claim';
    return fail(`id_token.${name}`, `the ID token's ${name} is not the expected one`);
  }
  if (e.name === 'ClientError' && !UNREACHABLE_CODES.has(e.code ?? '')) {
    return fail('id_token', `the provider's answer failed validation (${oauthCode(e.code?.toLowerCase())})`);
  }
  return unavailable(err, logger);
}

/** openid-client's codes for a provider that answered no usable HTTP response. */
const UNREACHABLE_CODES = new Set(['OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON']);

/** 503: the provider could not be reached or answered garbage; the log says what. */
function unavailable(err: unknown, logger: Logger): AppError {
  const e = err as { name?: string; code?: string; message?: string };
  logger.warn(
    { err: { name: e.name, code: e.code, message: e.message } },
    'sso: identity provider unavailable',
  );
  return new AppError('sso_unavailable', { cause: err });
}

/** The OpenID client of one gateway instance; discovery runs at first use and is kept. */
export function createSsoClient(config: SsoConfig, logger: Logger): SsoClient {
  let discovered: Promise<OidcConfiguration> | undefined;

  const configuration = async (): Promise<OidcConfiguration> => {
    if (!discovered) {
      const attempt = loadOidc().then((oidc) =>
        oidc.discovery(config.issuer, config.clientId, config.clientSecret, undefined, {
          timeout: 10,
          // http:// issuers are refused in production by the env schema (local providers, tests).
          ...(config.issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
        }),
      );
      discovered = attempt;
      // A failed discovery is retried by the next sign-in, not kept.
      attempt.catch(() => {
        if (discovered === attempt) discovered = undefined;
      });
    }
    try {
      return await discovered;
    } catch (err) {
      // Discovery failing is the provider's or the configuration's problem, never the user's.
      throw unavailable(err, logger);
    }
  };

  return {
    async authorizationUrl({ state, nonce, verifier }) {
      const [oidc, conf] = await Promise.all([loadOidc(), configuration()]);
      return oidc.buildAuthorizationUrl(conf, {
        redirect_uri: config.redirectUri,
        scope: config.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
    },
    async redeem(callbackUrl, { state, nonce, verifier }) {
      const [oidc, conf] = await Promise.all([loadOidc(), configuration()]);
      try {
        const tokens = await oidc.authorizationCodeGrant(
          conf,
          callbackUrl,
          { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
          { redirect_uri: config.redirectUri },
        );
        const claims = tokens.claims();
        if (!claims)
          throw new AppError('sso_failed', { details: [{ path: 'id_token', message: 'missing' }] });
        return claims as SsoClaims;
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw refusalOf(err, logger);
      }
    },
  };
}
