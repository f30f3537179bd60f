/// <reference lib="dom" />
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  describeWith,
  freePort,
  needChromium,
  type OpenAIFake,
  type SmtpCapture,
  startOpenAIFake,
  startSmtpCapture,
} from '@platform/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  assertConsoleBuilt,
  docsScreenshot,
  launchChromium,
  resetScreenshots,
  screenshot,
  watchProblems,
} from './support/browser';
import { parseDotenv, ROOT } from './support/compose';
import {
  type ConsoleGateway,
  masterKeyEnv,
  providersEnv,
  smtpEnv,
  startConsoleGateway,
} from './support/console-gateway';
import { startService } from './support/services';

// The web console in Debian's Chromium against the gateway started through its
// real main (migrations, mailer, usage batching), with the SMTP capture and
// the OpenAI fake on loopback.

const PROVIDERS = ['openrouter', 'groq', 'cerebras', 'google', 'openai'];

/** The fields of the gateway's access-log line this test reads. */
type AccessLine = {
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
};
const COOKIE = 'gw_session';

let browser: Browser | undefined;
let smtp: SmtpCapture | undefined;
let openai: OpenAIFake | undefined;
let gateway: ConsoleGateway | undefined;
let otherOrigin: http.Server | undefined;
let base: string;
let otherBase: string;

beforeAll(async () => {
  assertConsoleBuilt();
  resetScreenshots();
  browser = await launchChromium();
  [smtp, openai] = await Promise.all([startSmtpCapture(), startOpenAIFake()]);
  gateway = await startConsoleGateway({
    ...providersEnv(PROVIDERS, openai.baseURL),
    ...smtpEnv(smtp),
    ...masterKeyEnv(),
  });
  base = gateway.base;
  // Another origin (another port: same site, so the Lax cookie does go along).
  otherOrigin = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>another site</title><h1>Another site</h1>');
  });
  await new Promise<void>((resolve) => otherOrigin?.listen(0, '127.0.0.1', resolve));
  otherBase = `http://127.0.0.1:${(otherOrigin.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await new Promise((resolve) => (otherOrigin ? otherOrigin.close(resolve) : resolve(undefined)));
  await smtp?.close();
  await openai?.close();
});

/** With UPDATE_DOCS_SCREENSHOTS=1, the pictures docs/console.md shows are written to docs/img/. */
const docsShot = docsScreenshot;

let counter = 0;
function uniqueEmail(tag: string): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}

async function linkFor(email: string): Promise<URL> {
  const mail = await (smtp as SmtpCapture).waitForMessage((m) => m.to.includes(email), 10_000);
  const match = /https?:\/\/\S+/.exec(mail.text);
  if (!match) throw new Error('no link in the mail');
  return new URL(match[0]);
}

/** The gateway from Node, as a program would call it. */
async function gw(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? null : JSON.stringify(init.body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

function chatWith(key: string) {
  return gw('/api/v1/ai/chat/completions', {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: { lane: 'free', project_id: 'e2e-project', messages: [{ role: 'user', content: 'hi' }] },
  });
}

async function sessionCookieOf(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies(base)).find((c) => c.name === COOKIE);
  if (!cookie) throw new Error('no session cookie in the browser');
  return `${COOKIE}=${cookie.value}`;
}

/** Clicks Refresh until the usage table shows `text`: usage rows are written in batches. */
async function refreshUntilUsageShows(page: Page, text: string): Promise<void> {
  const table = page.getByTestId('usage-table');
  for (let attempt = 0; attempt < 40; attempt++) {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('#usage[aria-busy="false"]').waitFor();
    if (((await table.count()) > 0 && (await table.textContent())?.includes(text)) ?? false) return;
    await page.waitForTimeout(250);
  }
  throw new Error(`the usage table never showed ${text}`);
}

async function focusedText(page: Page): Promise<string> {
  return page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
}

describeWith(needChromium())('the web console in Chromium', () => {
  it('signs in by mail, creates, uses and revokes a key, shows usage and spend, sets a budget and stores a provider key', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1100, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    const problems = watchProblems(page);
    const email = uniqueEmail('console');

    // 1. Sign in through the real SMTP capture, following the mailed link in the browser.
    // Signed out, the page asks for nothing that answers 401 (Chromium would log each one).
    const unauthorized: string[] = [];
    const on401 = (res: { status(): number; url(): string }) => {
      if (res.status() === 401) unauthorized.push(res.url());
    };
    page.on('response', on401);
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.waitForLoadState('networkidle');
    page.off('response', on401);
    expect(unauthorized).toEqual([]);
    expect(await page.getByRole('link', { name: 'API reference' }).getAttribute('href')).toBe('./docs');
    await screenshot(page, 'sign-in');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByText('a link is on its way').waitFor();
    await screenshot(page, 'link-sent');
    const link = await linkFor(email);
    expect(link.origin).toBe(base);
    expect(link.pathname).toBe('/');
    await page.goto(link.href);
    // Opening the link spends nothing: the page waits for a button press.
    await page.getByRole('heading', { name: 'Finish signing in' }).waitFor();
    await screenshot(page, 'finish-sign-in');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
    expect(page.url()).not.toContain('code=');
    await screenshot(page, 'signed-in');

    // 2. Create a key and read its plaintext from the page.
    await page.getByLabel('New key name (letters and digits)').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    const created = page.getByRole('dialog');
    await created.waitFor();
    const plaintext = await page.getByTestId('new-key').inputValue();
    expect(plaintext).toMatch(/^gw_[A-Za-z0-9]{20,}$/);
    expect(await created.textContent()).toContain('you will not see it again');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(plaintext);
    // How to call it: base URL, both headers, curl and the OpenAI SDK, with this key.
    const howTo = (await page.getByTestId('how-to-call').textContent()) ?? '';
    for (const part of [
      `${base}/v1`,
      'Authorization: Bearer',
      'x-api-key',
      `curl ${base}/v1/chat/completions`,
    ]) {
      expect(howTo).toContain(part);
    }
    expect(howTo).toContain(`new OpenAI({ baseURL: '${base}/v1', apiKey: '${plaintext}' })`);
    await screenshot(page, 'key-created');
    await page.setViewportSize({ width: 1280, height: 1000 });
    await docsShot(page, 'console-key-created');
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await created.waitFor({ state: 'detached' });
    // Focus goes back to where the dialog was opened from.
    await page.waitForFunction(() => document.activeElement?.textContent?.trim() === 'Create key');
    const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'ci', exact: true }) });
    expect(await row.textContent()).toContain(plaintext.slice(0, 12));
    expect(await row.textContent()).toContain('active');
    expect(await page.content()).not.toContain(plaintext.slice(12));

    // 3. Use the key from Node against the fake provider.
    const chat = await chatWith(plaintext);
    expect(chat.status).toBe(200);
    expect(chat.body.content).toBe('Hello from the OpenAI fake.');

    // 4. The usage appears: per project, day, lane and model, and today's tokens.
    await refreshUntilUsageShows(page, 'e2e-project');
    const usage = (await page.getByTestId('usage-table').textContent()) ?? '';
    expect(usage).toContain('free');
    expect(usage).toContain('llama-3.3-70b-versatile');
    expect(await page.locator('#usage svg[role="img"] rect.bar').count()).toBe(30);
    expect(await page.locator('label[for="budget-meter"]').textContent()).toMatch(/of 5,000,000 tokens/);
    await screenshot(page, 'usage');
    expect(await page.getByRole('columnheader', { name: 'Errors' }).count()).toBe(1);

    // The quick try streams an answer with the key just created (held in memory only).
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('answer-meta').waitFor();
    expect(await page.getByTestId('answer').textContent()).toBe('Hello from the OpenAI fake.');
    await screenshot(page, 'quick-try');
    // The same message in each /v1 wire format the quick try speaks.
    const formats: Array<[string, string]> = [
      ['openai', '/v1/chat/completions'],
      ['anthropic', '/v1/messages'],
      ['responses', '/v1/responses'],
    ];
    for (const [format, path] of formats) {
      await page.getByLabel('Format').selectOption(format);
      // The previous answer's line is cleared when sending, before the request goes out.
      await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === path && r.status() === 200),
        page.getByRole('button', { name: 'Send' }).click(),
      ]);
      await page.getByTestId('answer-meta').waitFor();
      expect({ format, answer: await page.getByTestId('answer').textContent() }).toEqual({
        format,
        answer: 'Hello from the OpenAI fake.',
      });
    }
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).toBe('{}');

    // Spend in currency beside tokens (reloaded after the quick try): the project's row has a cost.
    const spendRow = page.getByTestId('spend-project').locator('tr', { hasText: 'e2e-project' });
    await spendRow.waitFor();
    expect(await spendRow.locator('td').last().textContent()).toMatch(/^\$\d+\.\d{2,6}$/);
    expect(await page.getByTestId('spend-total').textContent()).toMatch(/^Last 30 days: \$\d+\.\d{2,6}/);
    // A budget set in the page (a monthly cost budget for the project) is listed with its limit.
    const budgetForm = page.getByRole('form', { name: 'Set a budget' });
    await budgetForm.getByLabel('For').selectOption('project');
    await budgetForm.getByLabel('Project id').fill('e2e-project');
    await budgetForm.getByLabel('Period').selectOption('monthly');
    await budgetForm.getByLabel('In').selectOption('cost');
    await budgetForm.getByLabel('Limit').fill('2.5');
    await budgetForm.getByRole('button', { name: 'Set budget' }).click();
    const budgetRow = page.getByTestId('budgets-table').locator('tr', { hasText: 'project e2e-project' });
    await budgetRow.waitFor();
    expect(await budgetRow.textContent()).toContain('monthly');
    expect(await budgetRow.textContent()).toContain('$2.50');
    await screenshot(page, 'spend-and-budgets');

    // 5. Revoke the key in the page; the next call from Node gets 401 invalid api key.
    const revokeButton = page.getByRole('button', { name: 'Revoke key ci' });
    await revokeButton.click();
    const confirm = page.getByRole('alertdialog');
    await confirm.waitFor();
    // Cancel has focus first, so a stray Enter does not revoke; Escape closes without revoking.
    expect(await focusedText(page)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement?.id === 'api-keys-title');
    expect(await row.textContent()).toContain('active');
    // Again, by keyboard only: Tab from Cancel to the confirming button, then Enter.
    await revokeButton.focus();
    await page.keyboard.press('Enter');
    await confirm.waitFor();
    await screenshot(page, 'revoke-confirm');
    await page.keyboard.press('Tab');
    expect(await focusedText(page)).toBe('Revoke key');
    await page.keyboard.press('Enter');
    await confirm.waitFor({ state: 'detached' });
    await row.getByText('revoked').waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'api-keys-title');
    const refused = await chatWith(plaintext);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid api key');
    await screenshot(page, 'key-revoked');

    // 6. Store and delete a provider key; it is never shown back.
    const providerSecret = `gsk_e2e_${randomBytes(12).toString('hex')}`;
    await page.getByLabel('Provider', { exact: true }).selectOption('groq');
    await page.getByLabel('Key', { exact: true }).fill(providerSecret);
    await page.getByRole('button', { name: 'Store key' }).click();
    await page.getByText('Stored a key for Groq.').waitFor();
    await page.locator('li[data-provider="groq"]').waitFor();
    // Its last four characters tell which key is stored, and nothing more.
    expect(await page.locator('li[data-provider="groq"] .last4').textContent()).toBe(
      `…${providerSecret.slice(-4)}`,
    );
    expect(await page.content()).not.toContain(providerSecret);
    const cookie = await sessionCookieOf(context);
    const stored = await gw('/api/v1/keys', { headers: { cookie } });
    expect(JSON.stringify(stored.body)).not.toContain(providerSecret);
    expect((stored.body as unknown as Array<{ provider: string }>).map((k) => k.provider)).toEqual(['groq']);
    await screenshot(page, 'provider-key-stored');
    await page.getByRole('button', { name: 'Delete the Groq key' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete key' }).click();
    await page.getByText('No provider keys stored.').waitFor();
    expect((await gw('/api/v1/keys', { headers: { cookie } })).body).toEqual([]);

    // The 5-key limit is said in words.
    for (let i = 1; i <= 5; i++) {
      const res = await gw('/api/v1/auth/api-keys', {
        method: 'POST',
        headers: { cookie, origin: base },
        body: { name: `bulk${i}` },
      });
      expect(res.status).toBe(201);
    }
    await page.reload();
    await page.getByText('You have reached the limit of 5 active keys').waitFor();
    await page.getByLabel('New key name (letters and digits)').fill('sixth');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('You already have 5 active API keys, the most allowed.').waitFor();
    await screenshot(page, 'key-limit');

    await page.setViewportSize({ width: 1280, height: 900 });
    await docsShot(page, 'console-desktop', true);

    // A phone-width screen: nothing wider than the screen (tables scroll inside their box),
    // the key table's Status and Revoke in view without scrolling sideways, chart labels legible.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const revoke = await page.getByRole('button', { name: 'Revoke key bulk1' }).boundingBox();
    expect(revoke).not.toBeNull();
    expect((revoke?.x ?? 0) + (revoke?.width ?? 0)).toBeLessThanOrEqual(390);
    const status = await page
      .locator('tr', { has: page.getByRole('rowheader', { name: 'bulk1' }) })
      .getByText('active')
      .boundingBox();
    expect((status?.x ?? 0) + (status?.width ?? 0)).toBeLessThanOrEqual(390);
    const labelPx = await page.evaluate(() =>
      [...document.querySelectorAll('.chart-labels span, .chart-peak')].map((e) =>
        Number.parseFloat(getComputedStyle(e).fontSize),
      ),
    );
    expect(labelPx.length).toBe(3);
    for (const px of labelPx) expect(px).toBeGreaterThanOrEqual(12);
    await screenshot(page, 'phone');
    await docsShot(page, 'console-phone', true);

    // Sign out ends the session on the server too.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await gw('/api/v1/auth/session', { headers: { cookie } })).status).toBe(401);

    // No CSP refusal and no script error on the way.
    expect(problems).toEqual([]);
    // The access log masks the code the browser brought in the URL, and no key is ever logged.
    const output = (gateway as ConsoleGateway).process.output();
    expect(output).toContain('"url":"/?code=');
    expect(output).not.toContain(link.searchParams.get('code'));
    expect(output).not.toContain(plaintext);
    expect(output).not.toContain(providerSecret);
    await context.close();
  }, 120_000);

  it('a page on another origin can neither read nor change anything while the victim is signed in', async () => {
    // Sign in from Node and hand the session to the browser.
    const email = uniqueEmail('victim');
    expect((await gw('/api/v1/auth/request-magic-link', { method: 'POST', body: { email } })).status).toBe(
      202,
    );
    const code = (await linkFor(email)).searchParams.get('code');
    const verified = await fetch(`${base}/api/v1/auth/verify-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(verified.status).toBe(200);
    const token = /gw_session=([^;]+)/.exec(verified.headers.get('set-cookie') ?? '')?.[1] ?? '';
    const cookie = `${COOKIE}=${token}`;
    const own = { cookie, origin: base };
    const key = await gw('/api/v1/auth/api-keys', {
      method: 'POST',
      headers: own,
      body: { name: 'victim' },
    });
    expect(key.status).toBe(201);
    const stored = await gw('/api/v1/keys', {
      method: 'POST',
      headers: own,
      body: { provider: 'openai', key: 'sk-victim-0123456789' },
    });
    expect(stored.status).toBe(201);

    // A code the other site got hold of (its own account): login CSRF would sign the victim into it.
    const attackerEmail = uniqueEmail('attacker');
    await gw('/api/v1/auth/request-magic-link', { method: 'POST', body: { email: attackerEmail } });
    const attackerCode = (await linkFor(attackerEmail)).searchParams.get('code') ?? '';

    const context = await (browser as Browser).newContext();
    await context.addCookies([{ name: COOKIE, value: token, url: base, httpOnly: true, sameSite: 'Lax' }]);
    const page = await context.newPage();
    await page.goto(`${otherBase}/`);
    const outcome = await page.evaluate(
      async ({ gateway, keyId, attackerCode }) => {
        const tries: Record<string, () => Promise<Response>> = {
          'read keys': () => fetch(`${gateway}/api/v1/auth/api-keys/list`, { credentials: 'include' }),
          'read session': () => fetch(`${gateway}/api/v1/auth/session`, { credentials: 'include' }),
          'read provider keys': () => fetch(`${gateway}/api/v1/keys`, { credentials: 'include' }),
          'read usage': () => fetch(`${gateway}/api/v1/usage/today`, { credentials: 'include' }),
          'create key (json)': () =>
            fetch(`${gateway}/api/v1/auth/api-keys`, {
              method: 'POST',
              credentials: 'include',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ name: 'evil' }),
            }),
          'delete provider key': () =>
            fetch(`${gateway}/api/v1/keys/openai`, { method: 'DELETE', credentials: 'include' }),
          // "Simple" requests skip the preflight and do reach the gateway; its Origin check refuses them.
          'create key (no-cors)': () =>
            fetch(`${gateway}/api/v1/auth/api-keys`, {
              method: 'POST',
              mode: 'no-cors',
              credentials: 'include',
              headers: { 'content-type': 'text/plain' },
              body: JSON.stringify({ name: 'evil' }),
            }),
          'revoke key (no-cors)': () =>
            fetch(`${gateway}/api/v1/auth/api-keys/revoke`, {
              method: 'POST',
              mode: 'no-cors',
              credentials: 'include',
              headers: { 'content-type': 'text/plain' },
              body: JSON.stringify({ key_id: keyId }),
            }),
          'store provider key (no-cors)': () =>
            fetch(`${gateway}/api/v1/keys`, {
              method: 'POST',
              mode: 'no-cors',
              credentials: 'include',
              headers: { 'content-type': 'text/plain' },
              body: JSON.stringify({ provider: 'groq', key: 'gsk-evil-0123456789' }),
            }),
          'sign in with another code (no-cors)': () =>
            fetch(`${gateway}/api/v1/auth/verify-code`, {
              method: 'POST',
              mode: 'no-cors',
              credentials: 'include',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ code: attackerCode }),
            }),
          'log out (no-cors)': () =>
            fetch(`${gateway}/api/v1/auth/logout`, {
              method: 'POST',
              mode: 'no-cors',
              credentials: 'include',
            }),
        };
        const result: Record<string, string> = {};
        for (const [name, attempt] of Object.entries(tries)) {
          try {
            const res = await attempt();
            result[name] = `${res.type} ${res.status} ${await res.text().catch(() => '')}`.trim();
          } catch {
            result[name] = 'blocked';
          }
        }
        return result;
      },
      { gateway: base, keyId: String(key.body.key_id), attackerCode },
    );
    await screenshot(page, 'other-origin');
    expect(outcome).toEqual({
      'read keys': 'blocked',
      'read session': 'blocked',
      'read provider keys': 'blocked',
      'read usage': 'blocked',
      'create key (json)': 'blocked',
      'delete provider key': 'blocked',
      // These reach the gateway, but its answer (Cross-Origin-Resource-Policy: same-origin) does not reach the page.
      'create key (no-cors)': 'blocked',
      'revoke key (no-cors)': 'blocked',
      'store provider key (no-cors)': 'blocked',
      'sign in with another code (no-cors)': 'blocked',
      'log out (no-cors)': 'blocked',
    });

    // Nothing changed on the server, and the session still works.
    const keys = await gw('/api/v1/auth/api-keys/list', { headers: { cookie } });
    expect(keys.body.keys).toEqual([expect.objectContaining({ name: 'victim', status: 'active' })]);
    const providers = await gw('/api/v1/keys', { headers: { cookie } });
    expect((providers.body as unknown as Array<{ provider: string }>).map((k) => k.provider)).toEqual([
      'openai',
    ]);
    expect((await gw('/api/v1/auth/session', { headers: { cookie } })).status).toBe(200);
    // The refused sign-in did not spend the code.
    const lastId = randomUUID();
    const attacker = await gw('/api/v1/auth/verify-code', {
      method: 'POST',
      headers: { 'x-request-id': lastId },
      body: { code: attackerCode },
    });
    expect(attacker.status).toBe(200);
    // Log lines reach the output through the logger's buffer (up to 100 ms later). The
    // attacker's line is this test's last, so once it is there every 403 before it is too.
    const output = () => (gateway as ConsoleGateway).process.output();
    for (let i = 0; i < 50 && !output().includes(lastId); i++) await new Promise((r) => setTimeout(r, 100));
    // The access log (no headers in it): the simple writes did arrive, and the Origin check
    // refused each with 403; the JSON and DELETE writes never got past the browser's preflight.
    const writes = output()
      .split('\n')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as AccessLine];
        } catch {
          return [];
        }
      })
      .filter((l) => l.res?.statusCode === 403 && l.req?.method !== 'GET' && l.req?.method !== 'OPTIONS')
      .map((l) => `${l.req?.method} ${l.req?.url} ${l.res?.statusCode}`);
    expect([...new Set(writes)].sort()).toEqual([
      'POST /api/v1/auth/api-keys 403',
      'POST /api/v1/auth/api-keys/revoke 403',
      'POST /api/v1/auth/logout 403',
      'POST /api/v1/auth/verify-code 403',
      'POST /api/v1/keys 403',
    ]);
    await context.close();
  }, 60_000);

  it('with npm start defaults and no SMTP, says the link is in the gateway output, and that link signs in', async () => {
    // config/local.env (what `npm start` loads) and the embedded database: no SMTP_URL, no Postgres, no Redis.
    const localEnv = Object.fromEntries(
      [...parseDotenv(fs.readFileSync(path.join(ROOT, 'config', 'local.env'), 'utf8'))].map(([k, v]) => [
        k,
        v.value,
      ]),
    );
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-local-'));
    const port = await freePort();
    const local = await startService(
      'gateway',
      { ...localEnv, DATA_DIR: dataDir, GATEWAY_PUBLIC_URL: `http://localhost:${port}` },
      { port },
    );
    const context = await (browser as Browser).newContext();
    try {
      const page = await context.newPage();
      await page.goto(`http://localhost:${port}/`);
      await page.getByText('Development mode: no SMTP server is configured').waitFor();
      const email = uniqueEmail('local');
      await page.getByLabel('E-mail address').fill(email);
      await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await page.getByText("it was written to the gateway's output").waitFor();
      await screenshot(page, 'local-link-in-output');
      // The log mailer's block in the process output, as a person would copy it from the terminal.
      let link: string | undefined;
      for (let i = 0; i < 50 && !link; i++) {
        const out = local.output();
        const block = out.slice(out.indexOf(`To: ${email}`));
        link = out.includes(`To: ${email}`) ? /https?:\/\/\S+/.exec(block)?.[0] : undefined;
        if (!link) await page.waitForTimeout(100);
      }
      expect(local.output()).toContain('DEVELOPMENT ONLY - log mailer');
      expect(link).toMatch(new RegExp(`^http://localhost:${port}/\\?code=`));
      await page.goto(link ?? '');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
    } finally {
      await context.close();
      await local.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
