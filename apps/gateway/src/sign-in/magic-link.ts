import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '@platform/errors';
import { consumeLimit } from '@platform/service-kit';
import type { AuthDeps } from '../auth/deps';
import { mustUseSso } from '../env-sso';
import { originOf, trustedOrigins } from '../http/origins';
import type { Mailer } from '../mail/mailer';
import { KNOWN_ADDRESS_TTL_MS, SIGN_IN_LIMITS } from './limits';
import { signLinkState } from './link-state';

/**
 * Where a link with a redirect_url points: a confirm page that posts the code
 * as a form and then sends the browser on to the signed redirect_url.
 */
export const MAGIC_LINK_PATH = '/api/v1/auth/magic-link';
/**
 * Where every other link points: the web console, which shows a button that
 * posts the code as JSON. Neither page spends the code on GET.
 */
export const CONSOLE_LINK_PATH = '/';

/** What Redis holds under the code's hash: never the code itself. */
type StoredCode = { email: string; exp: number };

export function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

function codeKey(codeHash: string): string {
  return `magic-link:code:${codeHash}`;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** True when redirect_url lands on the gateway's own origin or on GATEWAY_CORS_ORIGINS. */
export function isTrustedRedirect(deps: AuthDeps, url: string): boolean {
  const origin = originOf(url);
  return origin !== undefined && trustedOrigins(deps.env).has(origin);
}

function publicUrl(deps: AuthDeps, path: string): URL {
  return new URL(deps.env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '') + path);
}

/**
 * Issues a one-time code and mails its link. The work done and the answer are
 * the same whether or not the address has an account (accounts are created at
 * first sign-in), and the mail is sent after the response, so neither the body
 * nor the timing tells anything about the address.
 */
export async function requestMagicLink(
  deps: AuthDeps,
  mailer: Mailer,
  input: { email: string; redirectUrl?: string; ip: string },
): Promise<void> {
  const email = normalizeEmail(input.email);
  // Refused before anything is stored or counted; the answer names the domain's rule, not the account.
  if (mustUseSso(deps.env, email)) throw ssoRequired();
  if (input.redirectUrl !== undefined && !isTrustedRedirect(deps, input.redirectUrl)) {
    throw new AppError('invalid_redirect_url');
  }
  await consumeLimit(deps.kv, SIGN_IN_LIMITS.linkPerIp, input.ip);
  // Counter keys carry a hash, not the address, so Redis holds no personal data.
  await consumeLimit(deps.kv, SIGN_IN_LIMITS.linkPerAddressAndIp, knownAddressHash(email, input.ip));
  // The mailbox's overall cap binds strangers only: from a client address that signed in as this
  // e-mail address before, its owner still gets a link when others have used the cap up.
  if ((await deps.kv.get(knownAddressKey(email, input.ip))) === null) {
    await consumeLimit(deps.kv, SIGN_IN_LIMITS.linkPerAddress, hashCode(email));
  }

  const { code, codeHash } = await issueSignInCode(deps, email);
  const now = new Date(deps.clock());
  const ttlMs = deps.env.MAGIC_LINK_TTL_MINUTES * 60_000;

  const link = publicUrl(deps, input.redirectUrl === undefined ? CONSOLE_LINK_PATH : MAGIC_LINK_PATH);
  link.searchParams.set('code', code);
  if (input.redirectUrl !== undefined) {
    const state = await signLinkState(deps.env.GATEWAY_SECRET, {
      redirectUrl: input.redirectUrl,
      codeHash,
      now,
      ttlSeconds: ttlMs / 1000,
    });
    link.searchParams.set('state', state);
  }
  const minutes = deps.env.MAGIC_LINK_TTL_MINUTES;
  void mailer
    .send({
      to: email,
      subject: 'Your sign-in link',
      text: `Sign in to the AI gateway:\n\n${link.href}\n\nThe link works once and expires in ${minutes} minutes.\nIf you did not ask for it, ignore this mail.\n`,
    })
    .catch((err: unknown) => deps.logger.error({ err }, 'magic link mail could not be sent'));
}

/**
 * A one-time sign-in code for `email` (normalised), valid
 * MAGIC_LINK_TTL_MINUTES: what a magic link carries, and what a team
 * invitation's link carries so that it signs the invited person in.
 */
export async function issueSignInCode(
  deps: AuthDeps,
  email: string,
): Promise<{ code: string; codeHash: string }> {
  const code = randomBytes(32).toString('base64url');
  const codeHash = hashCode(code);
  const ttlMs = deps.env.MAGIC_LINK_TTL_MINUTES * 60_000;
  const stored: StoredCode = { email: normalizeEmail(email), exp: deps.clock() + ttlMs };
  await deps.kv.set(codeKey(codeHash), JSON.stringify(stored), ttlMs);
  return { code, codeHash };
}

/** 403 `sso_required`: the address's domain is bound to single sign-on. */
export function ssoRequired(): AppError {
  return new AppError('sso_required', {
    details: [
      {
        path: 'email',
        message:
          'sign in with SSO (GET /api/v1/auth/sso/start); the operator has not allowed magic links here',
      },
    ],
  });
}

function knownAddressHash(email: string, ip: string): string {
  return hashCode(`${email}\n${ip}`);
}

function knownAddressKey(email: string, ip: string): string {
  return `magic-link:known:${knownAddressHash(email, ip)}`;
}

/** After a successful sign-in: this client address is the e-mail address's owner's for KNOWN_ADDRESS_TTL_MS. */
export async function rememberSignInAddress(deps: AuthDeps, email: string, ip: string): Promise<void> {
  await deps.kv.set(knownAddressKey(email, ip), '1', KNOWN_ADDRESS_TTL_MS);
}

/**
 * Consumes a code exactly once (atomic get-and-delete: of two concurrent
 * calls only one sees it). Unknown, used and expired codes all give 400
 * `invalid or expired code`.
 */
export async function consumeMagicCode(
  deps: AuthDeps,
  code: string,
): Promise<{ email: string; codeHash: string }> {
  const codeHash = hashCode(code);
  const raw = await deps.kv.getDel(codeKey(codeHash));
  if (raw === null) throw new AppError('invalid_code');
  const stored = JSON.parse(raw) as StoredCode;
  if (deps.clock() >= stored.exp) throw new AppError('invalid_code');
  return { email: stored.email, codeHash };
}
