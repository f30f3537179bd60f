/// <reference lib="dom" />
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  describeWith,
  type McpTestServer,
  needChromium,
  type SmtpCapture,
  startMcpTestServer,
  startSmtpCapture,
} from '@platform/testing';
import type { Browser } from 'playwright-core';
import { assertConsoleBuilt, launchChromium, screenshot, watchProblems } from './support/browser';
import {
  type ConsoleGateway,
  createKeyInConsole,
  masterKeyEnv,
  signInByMail,
  smtpEnv,
  startConsoleGateway,
} from './support/console-gateway';

// The console's MCP section in Chromium, against the gateway started through its real main
// (so also: the MCP SDK loads under `--conditions=source` with tsx, as `npm start` runs it):
// see an operator server's tools, register a server with a credential, set a key's tools.

const SECRET = 'console-upstream-secret-42';

let browser: Browser | undefined;
let smtp: SmtpCapture | undefined;
let gateway: ConsoleGateway | undefined;
let notes: McpTestServer | undefined;
let creds: McpTestServer | undefined;
let base: string;

beforeAll(async () => {
  assertConsoleBuilt();
  browser = await launchChromium();
  smtp = await startSmtpCapture();
  notes = await startMcpTestServer('stateful');
  creds = await startMcpTestServer('credentialed', {
    credential: { header: 'x-upstream-key', value: SECRET },
  });
  const mcpConfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-console-')), 'mcp.json');
  fs.writeFileSync(
    mcpConfig,
    JSON.stringify({
      servers: [{ name: 'notes', url: notes.endpoint }],
      user_servers: { allowed_hosts: ['127.0.0.1'] },
    }),
  );
  gateway = await startConsoleGateway({ ...smtpEnv(smtp), ...masterKeyEnv(), MCP_CONFIG: mcpConfig });
  base = gateway.base;
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await smtp?.close();
  await notes?.close();
  await creds?.close();
});

async function toolsOf(key: string): Promise<string[]> {
  const client = new Client({ name: 'console-check', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  await client.close();
  return names;
}

describeWith(needChromium())('the console MCP section in Chromium', () => {
  it("shows a server's tools, registers a server with a credential, and sets a key's allowed tools", async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    const email = `mcp-${process.pid}-${Date.now()}@example.com`;
    await signInByMail(page, base, smtp as SmtpCapture, email);
    const key = await createKeyInConsole(page, 'agent');

    // The operator's server and its tools as clients will see them.
    const notesRow = page.locator('[data-mcp-server="notes"]');
    await notesRow.getByRole('button', { name: 'Show tools' }).click();
    await page.getByTestId('mcp-tools-notes').filter({ hasText: 'notes__increment' }).waitFor();
    expect(await page.getByTestId('mcp-tools-notes').textContent()).toContain('notes__echo');

    // Register a server with a credential: the gateway checks it and shows its tools.
    await page.getByLabel('Name', { exact: true }).fill('mine');
    await page.getByLabel('URL').fill(creds?.endpoint as string);
    await page.getByLabel('Credential header (optional)').fill('x-upstream-key');
    await page.getByLabel('Credential value').fill(SECRET);
    await page.getByRole('button', { name: 'Register server' }).click();
    await page.getByTestId('mcp-registered').filter({ hasText: 'mine__whoami' }).waitFor();
    await page.locator('[data-mcp-server="mine"]').waitFor();
    expect(await page.content()).not.toContain(SECRET);
    expect(await toolsOf(key)).toEqual(['mine__whoami', 'notes__echo', 'notes__increment']);

    // The key may use notes/echo only.
    await page.locator('#mcp-key').selectOption({ label: await keyLabel(page) });
    await page.locator('#mcp-allow').fill('notes/echo');
    await page.getByRole('button', { name: 'Save allowed tools' }).click();
    await page.getByText('Saved.').waitFor();
    await screenshot(page, 'mcp-section');
    expect(await toolsOf(key)).toEqual(['notes__echo']);
    expect(problems).toEqual([]);
    await context.close();
  }, 180_000);
});

/** The one key's option label in the policy form. */
async function keyLabel(page: import('playwright-core').Page): Promise<string> {
  const option = page.locator('#mcp-key option').nth(1);
  await option.waitFor({ state: 'attached' });
  return (await option.textContent()) ?? '';
}
