import { randomBytes } from 'node:crypto';
import {
  describeWith,
  freePort,
  needChromium,
  type OidcTestProvider,
  startOidcProvider,
} from '@platform/testing';
import type { Browser } from 'playwright-core';
import { assertConsoleBuilt, launchChromium, watchProblems } from './support/browser';
import { type ConsoleGateway, startConsoleGateway } from './support/console-gateway';

// Single sign-on in Debian's Chromium: the console's "Sign in with SSO" button,
// a real OpenID provider (oidc-provider from npm) and the gateway started through
// its real main, where openid-client (ESM-only) is loaded by Node itself, not
// transformed by Jest as in the gateway's own SSO test.

const CLIENT = { client_id: 'gateway-e2e', client_secret: randomBytes(24).toString('hex') };

let browser: Browser | undefined;
let provider: OidcTestProvider | undefined;
let gateway: ConsoleGateway | undefined;
let base: string;

beforeAll(async () => {
  assertConsoleBuilt();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  provider = await startOidcProvider({
    clients: [{ ...CLIENT, redirect_uris: [`${base}/api/v1/auth/sso/callback`] }],
  });
  browser = await launchChromium();
  gateway = await startConsoleGateway(
    {
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CLIENT.client_id,
      OIDC_CLIENT_SECRET: CLIENT.client_secret,
      OIDC_ALLOWED_DOMAINS: 'corp.test',
    },
    port,
  );
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await provider?.close();
});

describeWith(needChromium())('single sign-on from the web console in Chromium', () => {
  it('signs in with SSO: the button, the provider login and consent, back signed in', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${base}/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByRole('link', { name: 'Sign in with SSO' }).click();
      // oidc-provider's own (development) login and consent pages.
      await page.waitForURL((url) => url.href.startsWith(provider?.issuer ?? '-'));
      await page.locator('input[name="login"]').fill('ada@corp.test');
      await page.locator('input[name="password"]').fill('any');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByTestId('signed-in-email').filter({ hasText: 'ada@corp.test' }).waitFor();
      expect(new URL(page.url()).origin).toBe(base);
      expect(page.url()).not.toContain('code=');
      const cookies = await context.cookies(base);
      const session = cookies.find((c) => c.name === 'gw_session');
      expect(session?.httpOnly).toBe(true);
      expect(session?.sameSite).toBe('Lax');
      // The state cookie was spent with the callback.
      expect(cookies.find((c) => c.name === 'gw_sso_state')).toBeUndefined();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('GET /api/v1/config tells the console that SSO is on', async () => {
    const config = (await (await fetch(`${base}/api/v1/config`)).json()) as { sso: boolean };
    expect(config.sso).toBe(true);
  });
});
