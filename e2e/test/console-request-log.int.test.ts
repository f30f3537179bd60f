/// <reference lib="dom" />
import { randomBytes } from 'node:crypto';
import {
  describeWith,
  needChromium,
  type OpenAIFake,
  type SmtpCapture,
  startOpenAIFake,
  startSmtpCapture,
} from '@platform/testing';
import type { Browser, Page } from 'playwright-core';
import {
  assertConsoleBuilt,
  docsScreenshot,
  launchChromium,
  screenshot,
  watchProblems,
} from './support/browser';
import {
  type ConsoleGateway,
  createKeyInConsole,
  openOnlyRequest,
  providersEnv,
  requestLogKeyOption,
  signInByMail,
  smtpEnv,
  startConsoleGateway,
} from './support/console-gateway';

// Issue 43 in Chromium: the console's request log against the gateway started through its real
// main. The upstream fake answers 500 to one key's requests (their prompts carry a marker the
// fake's responder matches); that key's failed request is found by key and status, and its page
// shows each attempt. A project whose owner turned capture on shows its prompt with the secret
// redacted; a project that did not shows no text at all.

const PROVIDERS = ['openrouter', 'groq', 'cerebras', 'google', 'openai'];
const FAIL_MARKER = 'please-fail-upstream';
const FAKE_SECRET = `sk-proj-${randomBytes(16).toString('hex')}`;

let browser: Browser | undefined;
let smtp: SmtpCapture | undefined;
let openai: OpenAIFake | undefined;
let gateway: ConsoleGateway | undefined;
let base: string;

beforeAll(async () => {
  assertConsoleBuilt();
  browser = await launchChromium();
  [smtp, openai] = await Promise.all([startSmtpCapture(), startOpenAIFake()]);
  // 500 for the failing key's prompts, an answer for everything else.
  openai.respond((body) =>
    JSON.stringify(body.messages ?? '').includes(FAIL_MARKER) ? { status: 500 } : undefined,
  );
  gateway = await startConsoleGateway({ ...providersEnv(PROVIDERS, openai.baseURL), ...smtpEnv(smtp) });
  base = gateway.base;
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await smtp?.close();
  await openai?.close();
});

/** With UPDATE_DOCS_SCREENSHOTS=1, the picture docs/observability.md shows is written to docs/img/. */
const docsShot = (page: Page, name: string) => docsScreenshot(page, name, true);

async function chat(key: string, project: string, content: string): Promise<number> {
  const res = await fetch(`${base}/api/v1/ai/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'user-agent': 'e2e-request-log/1.0' },
    body: JSON.stringify({ lane: 'free', project_id: project, messages: [{ role: 'user', content }] }),
  });
  await res.text();
  return res.status;
}

const createKey = createKeyInConsole;

const keyOption = requestLogKeyOption;

/** Opens the only row of a search (screenshotting the search) and waits for its page. */
const openOnly = (page: Page, filters: { key: string; status: string; project: string }) =>
  openOnlyRequest(page, filters, () => screenshot(page, 'request-log-search'));

describeWith(needChromium())('the request log in the console', () => {
  it('finds a failed request by key and status, shows its attempts, and captured prompts only where opted in, redacted', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    const email = `log-${process.pid}-${Date.now()}@example.com`;
    await signInByMail(page, base, smtp as SmtpCapture, email);
    const failing = await createKey(page, 'failing');
    const good = await createKey(page, 'good');

    // The owner turns capture on for one project in the console.
    const capture = page.locator('#project-capture');
    await capture.getByLabel('Project id').fill('opted-in');
    await capture.getByRole('button', { name: 'Save capture setting' }).click();
    await capture.getByText('opted-in: capture on.').waitFor();
    await capture.locator('[data-project="opted-in"]').waitFor();

    expect(await chat(good, 'opted-in', `my key is ${FAKE_SECRET}, keep it safe`)).toBe(200);
    expect(await chat(good, 'not-opted-in', `my key is ${FAKE_SECRET} again`)).toBe(200);
    // Last: its 500s open the lane's breakers, which would refuse the good key's requests too.
    expect(await chat(failing, 'opted-in', `${FAIL_MARKER}: hello`)).toBeGreaterThanOrEqual(500);

    // The failed request, by key and status; its page lists every attempt, each a 500.
    await page.getByRole('link', { name: 'Request log' }).click();
    await openOnly(page, { key: await keyOption(page, 'failing'), status: 'failed', project: '' });
    expect(await page.getByTestId('request-status').textContent()).toMatch(/^5\d\d/);
    const attempts = page.getByTestId('attempts-table').locator('tbody tr');
    expect(await attempts.count()).toBeGreaterThanOrEqual(2);
    for (const outcome of await attempts.evaluateAll((rows) =>
      rows.map((r) => r.getAttribute('data-outcome')),
    ))
      expect(outcome).toBe('server_error');
    expect(await page.getByTestId('attempts-table').textContent()).toContain('500');
    expect(await page.locator('svg.timeline rect.failed').count()).toBe(await attempts.count());
    await screenshot(page, 'request-log-failed');
    await docsShot(page, 'request-log');

    // The opted-in project's request shows its prompt, the secret redacted; the other shows none.
    await page.getByRole('link', { name: '← Request log' }).click();
    const goodLabel = await keyOption(page, 'good');
    await openOnly(page, { key: goodLabel, status: '200', project: 'opted-in' });
    const captured = page.getByTestId('captured-content');
    await captured.waitFor();
    const text = (await captured.textContent()) ?? '';
    expect(text).toContain('user: my key is [REDACTED], keep it safe');
    expect(text).toContain('Hello from the OpenAI fake.');
    expect(await page.content()).not.toContain(FAKE_SECRET);
    await screenshot(page, 'request-log-captured');

    await page.getByRole('link', { name: '← Request log' }).click();
    await openOnly(page, { key: goodLabel, status: '200', project: 'not-opted-in' });
    expect(await page.getByTestId('request-status').textContent()).toBe('200');
    expect(await page.getByTestId('captured-content').count()).toBe(0);
    expect(await page.content()).not.toContain(FAKE_SECRET);
    expect(await page.content()).not.toContain('[REDACTED]');
    expect(problems).toEqual([]);
    await context.close();
  }, 240_000);
});
