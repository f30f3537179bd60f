import { createHmac } from 'node:crypto';

/** jose loads with the first sign-in link, not in every worker at start (issue 46). */
const jose = () => require('jose') as typeof import('jose');

const AUDIENCE = 'gateway:magic-link';
const ISSUER = 'gateway';

/** A separate key per purpose, derived from GATEWAY_SECRET, so a state token is no use elsewhere. */
function stateKey(secret: string): Uint8Array {
  return new Uint8Array(createHmac('sha256', secret).update('magic-link-state/v1').digest());
}

/**
 * Signs the redirect_url into the link (HS256 JWT) so it travels with the mail
 * instead of being stored, and cannot be altered into an open redirect.
 * `sub` binds it to the code it was issued with.
 */
export async function signLinkState(
  secret: string,
  claims: { redirectUrl: string; codeHash: string; now: Date; ttlSeconds: number },
): Promise<string> {
  const iat = Math.floor(claims.now.getTime() / 1000);
  const { SignJWT } = jose();
  return new SignJWT({ redirect_url: claims.redirectUrl })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(claims.codeHash)
    .setIssuedAt(iat)
    .setExpirationTime(iat + claims.ttlSeconds)
    .sign(stateKey(secret));
}

/** The redirect_url of a valid state for this code, else undefined (never throws). */
export async function readLinkState(
  secret: string,
  token: string,
  expected: { codeHash: string; now: Date },
): Promise<string | undefined> {
  try {
    const { payload } = await jose().jwtVerify(token, stateKey(secret), {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      subject: expected.codeHash,
      currentDate: expected.now,
    });
    return typeof payload.redirect_url === 'string' ? payload.redirect_url : undefined;
  } catch {
    return undefined;
  }
}
