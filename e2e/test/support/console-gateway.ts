import { randomBytes } from 'node:crypto';
import { freePort, type SmtpCapture } from '@platform/testing';
import type { Page } from 'playwright-core';
import { createServiceStorage, type ServiceProcess, startService } from './services';

/** The gateway the console browser tests drive, on `base`, with its own database. */
export type ConsoleGateway = { base: string; process: ServiceProcess; stop(): Promise<void> };

/**
 * The gateway started through its real main, on loopback, with a fresh database, a random
 * secret and plain-HTTP session cookies (as the console browser tests need), plus `env`.
 * `port` for a test whose other fakes must know the gateway's URL before it starts.
 */
export async function startConsoleGateway(
  env: Record<string, string>,
  port?: number,
): Promise<ConsoleGateway> {
  const storage = await createServiceStorage('gateway');
  const listenOn = port ?? (await freePort());
  const base = `http://127.0.0.1:${listenOn}`;
  let gateway: ServiceProcess;
  try {
    gateway = await startService(
      'gateway',
      {
        ...storage.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        GATEWAY_PUBLIC_URL: base,
        GATEWAY_SECRET: randomBytes(32).toString('hex'),
        SESSION_COOKIE_SECURE: 'false',
        ...env,
      },
      { port: listenOn },
    );
  } catch (err) {
    await storage.drop();
    throw err;
  }
  return {
    base,
    process: gateway,
    stop: async () => {
      await gateway.stop();
      await storage.drop();
    },
  };
}

/** The gateway's SMTP_URL for the SMTP capture (a plain connection). */
export function smtpEnv(smtp: SmtpCapture): Record<string, string> {
  return { SMTP_URL: `${smtp.url}?ignoreTLS=true` };
}

/** A fresh master key, so teams and users can store provider keys. */
export function masterKeyEnv(): Record<string, string> {
  return { PROVIDER_KEYS_MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}` };
}

/** Server keys for `providers`, each sent to the OpenAI fake at `baseURL`. */
export function providersEnv(providers: string[], baseURL: string): Record<string, string> {
  return {
    ...Object.fromEntries(providers.map((p) => [`${p.toUpperCase()}_API_KEY`, `sk-e2e-${p}-server-key`])),
    AI_PROVIDER_BASE_URLS: providers.map((p) => `${p}=${baseURL}`).join(','),
  };
}

/** The first link of the newest mail to `email` (whose subject matches `subject`, if given). */
export async function mailedLink(smtp: SmtpCapture, email: string, subject?: RegExp): Promise<string> {
  const mail = await smtp.waitForMessage(
    (m) => m.to.includes(email) && (!subject || subject.test(m.subject ?? '')),
    10_000,
  );
  const link = /https?:\/\/\S+/.exec(mail.text)?.[0];
  if (!link) throw new Error(`no link in the mail to ${email}`);
  return link;
}

/** Signs `email` in through the console: asks for a link, opens the mailed one, confirms. */
export async function signInByMail(
  page: Page,
  base: string,
  smtp: SmtpCapture,
  email: string,
): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await page.goto(await mailedLink(smtp, email));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
}

/** Creates a personal API key named `name` in the console and returns its secret. */
export async function createKeyInConsole(page: Page, name: string): Promise<string> {
  await page.getByLabel('New key name (letters and digits)').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = await page.getByTestId('new-key').inputValue();
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  return key;
}

/**
 * Searches the request log section (personal or a team's, `#request-log`) until its table
 * has `count` rows: the log is written in batches about a second late.
 */
export async function searchRequestLogUntil(page: Page, count: number) {
  const rows = page.getByTestId('request-log-table').locator('tbody tr');
  for (let attempt = 0; attempt < 40; attempt++) {
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('#request-log[aria-busy="false"]').waitFor();
    if ((await rows.count()) === count) return rows;
    await page.waitForTimeout(250);
  }
  throw new Error(`the request log never showed ${count} rows`);
}

/** The request log's key filter option of the key named `name` (its label also shows the prefix). */
export async function requestLogKeyOption(page: Page, name: string): Promise<string> {
  const option = page.getByLabel('API key used').locator('option', { hasText: `${name} (` });
  await option.waitFor({ state: 'attached' });
  return (await option.textContent()) ?? '';
}

/**
 * Filters the request log by key label, status and project, waits for exactly one row,
 * calls `beforeOpen` (e.g. a screenshot), opens the row and waits for the request's page.
 */
export async function openOnlyRequest(
  page: Page,
  filters: { key: string; status: string; project: string },
  beforeOpen?: () => Promise<void>,
): Promise<void> {
  const log = page.locator('#request-log');
  await log.getByLabel('API key used').selectOption({ label: filters.key });
  await log.getByLabel('Status').selectOption(filters.status);
  await log.getByLabel('Project').fill(filters.project);
  const rows = await searchRequestLogUntil(page, 1);
  await beforeOpen?.();
  await rows.first().getByRole('link').click();
  await page.getByTestId('request-facts').waitFor();
}
