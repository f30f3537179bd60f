import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@platform/testing';
import type { Express } from 'express';
import request from 'supertest';
import { CONSOLE_CSP, resolveConsoleDir } from '../src/console/routes';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';

let h: AiHarness;
let caller: TestCaller;
let withConsole: Express;
let withoutConsole: Express;

/** A stand-in for the Vite build: the gateway only needs index.html and hashed assets. */
function fakeBuild(): string {
  // A parent folder named `assets` must not make index.html immutable.
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'gw-console-')), 'assets', 'console');
  mkdirSync(dir, { recursive: true });
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

beforeAll(async () => {
  h = await startAiHarness();
  caller = await h.createCaller();
  withConsole = h.startInstance({ GATEWAY_CONSOLE_DIR: fakeBuild() });
  withoutConsole = h.startInstance({ GATEWAY_CONSOLE_DIR: mkdtempSync(path.join(tmpdir(), 'gw-empty-')) });
});
afterAll(async () => {
  await h.close();
});

describe('the console at /', () => {
  it('serves index.html with a strict CSP, no-cache and no Referer', async () => {
    const res = await request(withConsole).get('/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('<title>console</title>');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res.headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval|https:|\*/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('serves the same page for the link a sign-in mail carries (/?code=…)', async () => {
    const res = await request(withConsole).get('/?code=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<title>console</title>');
  });

  it('serves hashed assets as immutable and other files as no-cache', async () => {
    const asset = await request(withConsole).get('/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await request(withConsole).get('/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('answers a missing file with the JSON 404 and never lists folders', async () => {
    for (const url of ['/assets/nope.js', '/assets/', '/../package.json']) {
      const res = await request(withConsole).get(url);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not found');
    }
  });

  it('answers 503 in JSON when the console is not built, and the API still works', async () => {
    const res = await request(withoutConsole).get('/');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'console not built: run npm run build',
      code: expect.any(String),
      request_id: expect.any(String),
    });
    const health = await request(withoutConsole).get('/health');
    expect(health.status).toBe(200);
  });

  it('finds the built console through the @platform/console package by default', () => {
    expect(resolveConsoleDir(undefined)).toBe(path.resolve(__dirname, '..', '..', 'console', 'dist'));
    expect(resolveConsoleDir('/srv/console')).toBe('/srv/console');
  });
});

describe('GET /api/v1/config', () => {
  it('tells a sign-in page that links go to the output when there is no SMTP', async () => {
    const res = await request(h.app).get('/api/v1/config');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      mail_delivery: 'log',
      magic_link_ttl_minutes: 15,
      lanes: ['free', 'standard', 'premium'],
      max_api_keys: 5,
      sso: false,
      providers: [
        { provider: 'openai', label: 'OpenAI' },
        { provider: 'openrouter', label: 'OpenRouter' },
        { provider: 'groq', label: 'Groq' },
        { provider: 'cerebras', label: 'Cerebras' },
        { provider: 'google', label: 'Google (Gemini)' },
        { provider: 'anthropic', label: 'Anthropic' },
        { provider: 'elevenlabs', label: 'ElevenLabs' },
      ],
      session_cookie: false,
    });
    expect(res.headers['cache-control']).toBe('no-store');
    const smtp = h.startInstance({ SMTP_URL: 'smtp://127.0.0.1:2525' });
    expect((await request(smtp).get('/api/v1/config')).body.mail_delivery).toBe('smtp');
  });
});

describe('GET /api/v1/config: session_cookie', () => {
  it('says whether a session cookie came along, so a signed-out console asks for no session (no 401)', async () => {
    const withCookie = await request(h.app).get('/api/v1/config').set('Cookie', 'gw_session=anything');
    expect(withCookie.body.session_cookie).toBe(true);
    const other = await request(h.app).get('/api/v1/config').set('Cookie', 'other=1');
    expect(other.body.session_cookie).toBe(false);
  });
});

describe('GET /api/v1/usage/today', () => {
  it("gives today's tokens against the daily budget, for a session or a key", async () => {
    const day = new Date().toISOString().slice(0, 10);
    const before = await request(h.app).get('/api/v1/usage/today').set('Cookie', caller.cookie);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      day,
      total_tokens: 0,
      daily_token_budget: 5_000_000,
      resets_at: new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString(),
    });

    h.openai.set({ usage: { prompt_tokens: 4, completion_tokens: 5 } });
    const chat = await request(h.app)
      .post('/api/v1/ai/chat/completions')
      .set('x-api-key', caller.apiKey)
      .send({ lane: 'free', project_id: 'p', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    // The budget is charged after the response, off the request path.
    let used = 0;
    await eventually(
      async () => {
        const res = await request(h.app).get('/api/v1/usage/today').set('x-api-key', caller.apiKey);
        used = res.body.total_tokens;
        return used === 9;
      },
      10_000,
      20,
    );
    expect(used).toBe(9);
  });

  it('refuses a caller with neither session nor key', async () => {
    const res = await request(h.app).get('/api/v1/usage/today');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('missing_authentication');
  });
});
