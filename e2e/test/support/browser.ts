import fs from 'node:fs';
import path from 'node:path';
import { needChromium } from '@platform/testing';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ROOT } from './compose';

/** Where each step's screenshot goes; git-ignored, kept by CI as an artefact. */
const SCREENSHOT_DIR = path.join(ROOT, 'e2e', 'artifacts', 'console');

/**
 * Headless Chromium with the flags this network needs: without the
 * background-networking ones it keeps trying (and failing) to reach Google.
 * Fails with an instruction, not a stack, when Chromium is missing.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await needChromium().start(),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Fails early, in words, when the console has not been built (the gateway would answer 503). */
export function assertConsoleBuilt(): void {
  const index = path.join(ROOT, 'apps', 'console', 'dist', 'index.html');
  if (!fs.existsSync(index)) {
    throw new Error(`${index} is missing: run \`npm run build\` before this test (.ci/run does).`);
  }
}

/** Empties the screenshot folder, so it shows one run only. */
export function resetScreenshots(): void {
  fs.rmSync(SCREENSHOT_DIR, { recursive: true, force: true });
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
}

let shot = 0;
/** A numbered full-page screenshot, so the folder reads as the story of the run. */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  shot += 1;
  await page.screenshot({
    path: path.join(SCREENSHOT_DIR, `${String(shot).padStart(2, '0')}-${name}.png`),
    fullPage: true,
  });
}

/**
 * Collects uncaught page errors and Content-Security-Policy refusals, so a
 * test can assert there were none. (Chromium also logs every 4xx answer as a
 * console error; those are expected, e.g. the session check when signed out.)
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) {
      problems.push(`csp: ${msg.text()}`);
    }
  });
  return problems;
}

/** With UPDATE_DOCS_SCREENSHOTS=1, a picture the docs show, written to docs/img/<name>.png. */
export async function docsScreenshot(page: Page, name: string, fullPage = false): Promise<void> {
  if (process.env.UPDATE_DOCS_SCREENSHOTS !== '1') return;
  await page.screenshot({ path: path.join(ROOT, 'docs', 'img', `${name}.png`), fullPage });
}
