/// <reference lib="dom" />
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
  mailedLink as mailedLinkOf,
  masterKeyEnv,
  openOnlyRequest,
  requestLogKeyOption,
  signInByMail,
  smtpEnv,
  startConsoleGateway,
} from './support/console-gateway';

// Issue 42's browser test: the console's team views in Chromium against the gateway started
// through its real main, the SMTP capture and the OpenAI fake. An owner creates a team and
// invites a member; the member opens the mailed invitation link (it signs them in), joins,
// and creates a team key with a model list; the key's rules hold for a chat call; the member
// finds that call in the team's request log and opens its timeline; the owner sees the key's
// creation, by the member, in the team's audit log.

let browser: Browser | undefined;
let smtp: SmtpCapture | undefined;
let openai: OpenAIFake | undefined;
let gateway: ConsoleGateway | undefined;
let base: string;

beforeAll(async () => {
  assertConsoleBuilt();
  browser = await launchChromium();
  smtp = await startSmtpCapture();
  openai = await startOpenAIFake();
  gateway = await startConsoleGateway({
    ...smtpEnv(smtp),
    GROQ_API_KEY: 'sk-console-teams-groq',
    AI_PROVIDER_BASE_URLS: `groq=${openai.baseURL}`,
    ...masterKeyEnv(),
  });
  base = gateway.base;
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await smtp?.close();
  await openai?.close();
});

const unique = (tag: string) => `${tag}-${process.pid}-${Date.now()}@example.com`;

/** The first link of the newest mail to `email`. */
const mailedLink = (email: string, subject?: RegExp) => mailedLinkOf(smtp as SmtpCapture, email, subject);

const signIn = (page: Page, email: string) => signInByMail(page, base, smtp as SmtpCapture, email);

describeWith(needChromium())('the console team views in Chromium', () => {
  it('owner creates a team and invites; the member joins by the link, creates a key; the owner audits it', async () => {
    const ownerContext = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const memberContext = await (browser as Browser).newContext({ viewport: { width: 1100, height: 900 } });
    const owner = await ownerContext.newPage();
    const member = await memberContext.newPage();
    const ownerProblems = watchProblems(owner);
    const memberProblems = watchProblems(member);
    const ownerEmail = unique('owner');
    const memberEmail = unique('member');

    // The owner: a new team from the switcher; the view switches to it.
    await signIn(owner, ownerEmail);
    await owner.getByRole('button', { name: 'New team' }).click();
    await owner.getByLabel('Team name').fill('Platform');
    await owner.getByRole('button', { name: 'Create team' }).click();
    await owner.getByRole('heading', { name: 'Team Platform' }).waitFor();
    expect(await owner.getByTestId('team-role').textContent()).toContain('owner');
    // The personal view's sections are gone while the team is shown.
    expect(await owner.locator('#api-keys').count()).toBe(0);

    // Invite the member by e-mail.
    await owner.getByRole('form', { name: 'Invite a member' }).getByLabel('E-mail address').fill(memberEmail);
    await owner.locator('#invite-role').selectOption('member');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await owner.getByTestId('invite-sent').filter({ hasText: memberEmail }).waitFor();
    await screenshot(owner, 'teams-invited');

    // The owner stores a provider key for the team: shown by its last four characters only.
    await owner.locator('#provider').selectOption('openai');
    await owner.getByLabel('Key', { exact: true }).fill('sk-team-secret-9876');
    await owner.getByRole('button', { name: 'Store key' }).click();
    await owner.locator('[data-provider="openai"]').filter({ hasText: '…9876' }).waitFor();
    expect(await owner.content()).not.toContain('sk-team-secret-9876');

    // The member: the invitation link signs them in, then they join.
    const invitation = await mailedLink(memberEmail, /invited to the team Platform/);
    expect(new URL(invitation).searchParams.get('team_invite')).toBeTruthy();
    await member.goto(invitation);
    await member.getByRole('button', { name: 'Sign in', exact: true }).click();
    await member.getByTestId('signed-in-email').filter({ hasText: memberEmail }).waitFor();
    // The address bar no longer carries the code or the invitation.
    expect(new URL(member.url()).search).toBe('');
    await member.getByRole('button', { name: 'Join team' }).click();
    await member.getByRole('heading', { name: 'Team Platform' }).waitFor();
    expect(await member.getByTestId('team-role').textContent()).toContain('member');
    // A member neither invites nor reads the audit log; sees the team's provider key, cannot delete it.
    expect(await member.getByRole('form', { name: 'Invite a member' }).count()).toBe(0);
    expect(await member.locator('#team-audit').count()).toBe(0);
    await member.locator('[data-provider="openai"]').filter({ hasText: '…9876' }).waitFor();
    expect(await member.getByRole('button', { name: /Delete the .* key/ }).count()).toBe(0);

    // The member creates a team key with a model list and a rate.
    await member.getByLabel('Key name (letters and digits)').fill('ci');
    await member.locator('#team-key-models').fill('groq/llama-3.3-70b-versatile\ncerebras/gpt-oss-120b');
    await member.locator('#team-key-rpm').fill('60');
    await member.getByRole('button', { name: 'Create team key' }).click();
    const key = await member.getByTestId('new-key').inputValue();
    expect(key).toMatch(/\S{20,}/);
    await member.getByRole('button', { name: 'I have copied it' }).click();
    const row = member.getByTestId('team-keys-table').locator('tr', { hasText: 'ci' });
    await row.filter({ hasText: 'models groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b' }).waitFor();
    expect(await row.textContent()).toContain('60 requests/min');
    await screenshot(member, 'teams-member-key');

    // On a 390 px phone the page does not scroll sideways and the key's Revoke stays in view.
    await member.setViewportSize({ width: 390, height: 844 });
    expect(await member.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // Inside the table's own scroll box too, not only the page's.
    const box = await member.getByTestId('team-keys-table').locator('xpath=..').boundingBox();
    const revoke = await member.getByRole('button', { name: 'Revoke key ci' }).boundingBox();
    expect(revoke).not.toBeNull();
    expect((revoke?.x ?? 0) + (revoke?.width ?? 0)).toBeLessThanOrEqual((box?.x ?? 0) + (box?.width ?? 0));
    await screenshot(member, 'teams-member-phone');
    await member.setViewportSize({ width: 1100, height: 900 });

    // The key's model list holds: the free lane answers (its Groq model is listed); the
    // standard lane has no listed model and is refused, naming the rule.
    const chat = (model: string) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await chat('free')).status).toBe(200);
    const refused = await chat('standard');
    // /v1 answers in OpenAI's error shape.
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      error: { message: 'model not allowed for this api key', param: 'key.models' },
    });

    // The member finds the key's answered request in the team's request log and opens its
    // timeline: one successful attempt; no captured text (capture is off, and members never get it).
    await member.getByRole('link', { name: 'Request log', exact: true }).click();
    const ciLabel = await requestLogKeyOption(member, 'ci');
    await openOnlyRequest(member, { key: ciLabel, status: '200', project: '' });
    expect(await member.getByTestId('request-status').textContent()).toBe('200');
    const attempts = member.getByTestId('attempts-table').locator('tbody tr');
    expect(await attempts.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-outcome')))).toEqual([
      'success',
    ]);
    expect(await member.getByTestId('attempts-table').textContent()).toContain('groq');
    expect(await member.locator('svg.timeline rect.ok').count()).toBe(1);
    expect(await member.getByTestId('captured-content').count()).toBe(0);
    await screenshot(member, 'teams-member-request');
    // Back to the team's view, its log section included.
    await member.getByRole('link', { name: '← Request log' }).click();
    await member.getByTestId('team-keys-table').waitFor();
    await member.locator('#request-log').waitFor();

    // The owner sees the member's key creation in the audit log (Refresh re-reads it).
    await owner.getByRole('button', { name: 'Refresh' }).click();
    const created = owner.getByTestId('team-audit-table').locator('tr[data-action="api_key.create"]');
    await created.waitFor();
    expect(await created.textContent()).toContain(memberEmail);
    expect(await created.textContent()).toContain('groq/llama-3.3-70b-versatile');
    const actions = await owner
      .getByTestId('team-audit-table')
      .locator('tr[data-action]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(actions).toEqual([
      'api_key.create',
      'member.join',
      'provider_key.set',
      'member.invite',
      'team.create',
    ]);
    // After a reload the owner picks the team again and sees the member and the key with its rules.
    await owner.reload();
    await owner.locator('#workspace').selectOption({ label: 'Team Platform (owner)' });
    await owner.getByTestId('team-keys-table').locator('tr', { hasText: 'models groq/llama' }).waitFor();
    await owner.getByTestId('team-members-table').locator(`tr[data-member="${memberEmail}"]`).waitFor();
    await owner.getByTestId('team-audit-table').locator('tr[data-action="api_key.create"]').waitFor();
    await screenshot(owner, 'teams-owner-audit');
    await docsScreenshot(owner, 'console-teams', true);

    expect(ownerProblems).toEqual([]);
    expect(memberProblems).toEqual([]);
    await ownerContext.close();
    await memberContext.close();
  }, 240_000);
});
