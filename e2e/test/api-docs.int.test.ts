/// <reference lib="dom" />
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describeWith, needChromium } from '@platform/testing';
import type { Browser } from 'playwright-core';
import { launchChromium, watchProblems } from './support/browser';
import { ROOT } from './support/compose';
import {
  createServiceStorage,
  type ServiceProcess,
  type ServiceStorage,
  startService,
} from './support/services';

// `/docs` of both services in Debian's Chromium, each service started through
// its real main: the OpenAPI document rendered by Swagger UI served from the
// service itself (no other origin is ever asked for anything), under the
// service's own CSP, with every operation listed, the filter box working and
// examples shown. UPDATE_DOCS_SCREENSHOTS=1 also writes docs/img/docs-<service>.png.
// LOG_LEVEL info: startService waits for the "listening" line.

const SHOTS = process.env.UPDATE_DOCS_SCREENSHOTS === '1' ? path.join(ROOT, 'docs', 'img') : undefined;

let browser: Browser | undefined;
const started: Array<{ service: ServiceProcess; storage: ServiceStorage }> = [];
const bases: Record<'payment' | 'gateway', string> = { payment: '', gateway: '' };

beforeAll(async () => {
  browser = await launchChromium();
  const env = {
    payment: {
      PAYMENT_MS_API_KEY: `docs-${randomBytes(8).toString('hex')}`,
      STRIPE_SECRET_KEY: 'sk_test_docs_placeholder',
    },
    gateway: { GATEWAY_SECRET: randomBytes(32).toString('hex'), SESSION_COOKIE_SECURE: 'false' },
  };
  for (const name of ['payment', 'gateway'] as const) {
    const storage = await createServiceStorage(name);
    const service = await startService(name, {
      ...storage.env,
      ...env[name],
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
    });
    started.push({ service, storage });
    bases[name] = `http://127.0.0.1:${service.port}`;
  }
}, 200_000);

afterAll(async () => {
  await browser?.close();
  for (const { service, storage } of started) {
    await service.stop();
    await storage.drop();
  }
}, 60_000);

describeWith(needChromium()).each(['payment', 'gateway'] as const)('%s /docs', (name) => {
  it('renders every operation of /openapi.json, filterable, with examples, from this origin only', async () => {
    const base = bases[name];
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(doc.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    const foreign: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(base) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    try {
      await page.goto(`${base}/docs`);
      await page.waitForSelector('.opblock', { timeout: 30_000 });
      expect(await page.locator('.opblock').count()).toBe(operations);
      expect(await page.locator('.info .title').textContent()).toContain(
        (doc as unknown as { info: { title: string } }).info.title,
      );

      // An operation opened shows its responses with an example body.
      await page.locator('.opblock .opblock-summary').first().click();
      await page.waitForSelector('.opblock.is-open .responses-wrapper');
      expect(
        await page.locator('.opblock.is-open .example, .opblock.is-open .microlight').count(),
      ).toBeGreaterThan(0);
      if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `docs-${name}.png`) });

      // The search box filters the operations by tag.
      const tag = await page.locator('.opblock-tag').first().getAttribute('data-tag');
      await page.locator('.operation-filter-input').fill(tag ?? '');
      await page.waitForFunction((n) => document.querySelectorAll('.opblock').length < n, operations, {
        timeout: 10_000,
      });
      expect(await page.locator('.opblock').count()).toBeGreaterThan(0);

      expect(problems).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
