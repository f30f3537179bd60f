import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseDotenv, ROOT } from './support/compose';
import { type ServiceProcess, startService } from './support/services';

// What `npm start` gives a newcomer: both services on config/local.env, with no
// DATABASE_URL or REDIS_URL, so on embedded PGlite folders and in-process stores.
// Data written before a restart must still be there after it.

const localEnv = Object.fromEntries(
  [...parseDotenv(fs.readFileSync(path.join(ROOT, 'config', 'local.env'), 'utf8'))].map(([k, v]) => [
    k,
    v.value,
  ]),
);

async function call(
  service: ServiceProcess,
  route: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`http://127.0.0.1:${service.port}${route}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

async function waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 100; i += 1) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('embedded defaults (no DATABASE_URL / REDIS_URL)', () => {
  const dirs: string[] = [];
  const running: ServiceProcess[] = [];
  const dataDir = (name: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `embedded-${name}-`));
    dirs.push(dir);
    return dir;
  };
  const start = async (name: 'payment' | 'gateway', dir: string) => {
    const service = await startService(name, { ...localEnv, DATA_DIR: dir });
    running.push(service);
    return service;
  };

  afterAll(async () => {
    for (const service of running) await service.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('payment starts on config/local.env and serves health, OpenAPI and the API', async () => {
    const payment = await start('payment', dataDir('payment'));
    const health = await call(payment, '/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok', timestamp: expect.any(String), service: 'payment' });
    const doc = await call(payment, '/openapi.json');
    expect(doc.json.openapi).toMatch(/^3\.0\./);
    const status = await call(payment, '/api/v1/subscriptions/user_1/prod_1', {
      headers: { 'X-API-Key': localEnv.PAYMENT_MS_API_KEY ?? '' },
    });
    expect(status.status).toBe(200);
    expect(status.json.status).toBe('none');
    expect(await payment.stop()).toBe(0);
  });

  it('gateway keeps users, sessions and API keys across a restart', async () => {
    const dir = dataDir('gateway');
    const first = await start('gateway', dir);
    const health = await call(first, '/health');
    expect(health.json).toEqual({ status: 'ok', timestamp: expect.any(String), service: 'gateway' });
    expect((await call(first, '/openapi.json')).json.openapi).toMatch(/^3\.0\./);

    // Without SMTP_URL the development log mailer prints the link: sign in with it.
    expect(
      (await call(first, '/api/v1/auth/request-magic-link', { body: { email: 'new@example.com' } })).status,
    ).toBe(202);
    const code = await waitFor(
      () => /[?&]code=([A-Za-z0-9_-]+)/.exec(first.output())?.[1],
      'the logged link',
    );
    const verified = await call(first, '/api/v1/auth/verify-code', { body: { code } });
    expect(verified.status).toBe(200);
    const cookie = (verified.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const created = await call(first, '/api/v1/auth/api-keys', {
      headers: { cookie, origin: localEnv.GATEWAY_PUBLIC_URL ?? '' },
      body: { name: 'persisted' },
    });
    expect(created.status).toBe(201);
    expect(await first.stop()).toBe(0);

    const second = await start('gateway', dir);
    const me = await call(second, '/api/v1/me', { headers: { 'x-api-key': String(created.json.key) } });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({
      email: 'new@example.com',
      id: (verified.json.user as { id: string }).id,
    });
    const session = await call(second, '/api/v1/auth/session', { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(session.json.email).toBe('new@example.com');
  });
});
