import path from 'node:path';
import { type GatewayConfigResponse, MAX_API_KEYS_PER_USER } from '@platform/contract';
import { AppError } from '@platform/errors';
import express, { type Response, Router } from 'express';
import { readCookie } from '../auth/cookies';
import type { GatewayDeps } from '../deps';
import { ssoConfigOf } from '../env-sso';

/**
 * The console's own policy, stricter than helmet's default: scripts, styles
 * and fetches from this origin only, no inline code of any kind, no frames,
 * no plugins. It replaces helmet's header on the console's responses.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const NOT_BUILT = 'console not built: run npm run build';

/**
 * Where the built console lives: GATEWAY_CONSOLE_DIR, else the `dist/` of the
 * @platform/console package. Undefined when neither can be found; `/` then
 * answers 503 and the API works as before.
 */
export function resolveConsoleDir(configured: string | undefined): string | undefined {
  if (configured) return path.resolve(configured);
  try {
    return path.join(path.dirname(require.resolve('@platform/console/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

/** Headers of every console response; `file` is the path inside the console folder. */
function consoleHeaders(res: Response, file: string): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  // The page's URL may carry a sign-in code; no Referer may take it anywhere.
  res.setHeader('Referrer-Policy', 'no-referrer');
  // File names under assets/ carry a content hash, so they never change.
  const hashed = file.split(path.sep)[0] === 'assets';
  res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
}

/**
 * The web console at `/` (static files built by @platform/console, same
 * origin as the API, so the session cookie and the Origin check need nothing
 * extra) and `GET /api/v1/config`, the public settings its sign-in form reads.
 */
export function createConsoleRouter(deps: GatewayDeps): Router {
  const router = Router();
  const dir = resolveConsoleDir(deps.env.GATEWAY_CONSOLE_DIR);
  const mailDelivery = deps.mailer.kind;
  const sso = ssoConfigOf(deps.env) !== null;
  const catalog = deps.ai.catalog;
  const providers = catalog.names.map((provider) => ({
    provider,
    label: catalog.get(provider)?.label ?? provider,
  }));

  router.get('/api/v1/config', (req, res) => {
    // Varies with the cookie: never cached by anyone.
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      mail_delivery: mailDelivery,
      magic_link_ttl_minutes: deps.env.MAGIC_LINK_TTL_MINUTES,
      lanes: deps.env.AI_ALLOWED_LANES,
      max_api_keys: MAX_API_KEYS_PER_USER,
      sso,
      providers,
      session_cookie: readCookie(req, deps.env.SESSION_COOKIE_NAME) !== undefined,
    } satisfies GatewayConfigResponse);
  });

  router.get(['/', '/index.html'], (_req, res, next) => {
    if (!dir) {
      next(new AppError('service_unavailable', { message: NOT_BUILT }));
      return;
    }
    const file = path.join(dir, 'index.html');
    consoleHeaders(res, 'index.html');
    res.sendFile(file, (err) => {
      if (!err) return;
      if (res.headersSent) return;
      res.removeHeader('Content-Security-Policy');
      next(new AppError('service_unavailable', { message: NOT_BUILT }));
    });
  });

  if (dir) {
    router.use(
      express.static(dir, {
        index: false,
        redirect: false,
        dotfiles: 'ignore',
        setHeaders: (res, file) => consoleHeaders(res, path.relative(dir, file)),
      }),
    );
  }
  return router;
}
