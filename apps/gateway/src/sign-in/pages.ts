import { escapeHtml } from '@platform/service-kit';
import type { Response } from 'express';

function sendPage(res: Response, status: number, title: string, body: string, formTargets: string[]): void {
  // Own CSP: no scripts at all, and the form (plus the redirect after it) may only go where we allow.
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${formTargets.join(' ')}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res
    .status(status)
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem">${body}</body></html>`,
    );
}

/**
 * The page a magic link opens. Signing in takes a button press (a POST), so
 * mail scanners that fetch links do not burn the code.
 */
export function sendConfirmPage(
  res: Response,
  opts: { code: string; state?: string; action: string; formTargets: string[] },
): void {
  const state = opts.state ? `<input type="hidden" name="state" value="${escapeHtml(opts.state)}">` : '';
  sendPage(
    res,
    200,
    'Sign in',
    `<h1>Sign in</h1><form method="post" action="${escapeHtml(opts.action)}"><input type="hidden" name="code" value="${escapeHtml(opts.code)}">${state}<button type="submit">Sign in</button></form>`,
    opts.formTargets,
  );
}

export function sendSignedInPage(res: Response): void {
  sendPage(res, 200, 'Signed in', '<h1>Signed in</h1><p>You can close this tab.</p>', []);
}

export function sendBadLinkPage(res: Response): void {
  sendPage(res, 400, 'Invalid link', '<h1>Invalid link</h1><p>Request a new sign-in link.</p>', []);
}
