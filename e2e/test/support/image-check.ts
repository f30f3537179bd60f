// Runs one service image (built by infra/docker/check-images.sh) the way production
// does and checks it from outside:
//   npx tsx --conditions source e2e/test/support/image-check.ts <payment|gateway> <image>
// - `migrate-deploy` (the image's own migration runner) on a fresh database;
// - the service with two workers, host networking, a read-only root filesystem,
//   every capability dropped and no-new-privileges, against a fresh Postgres
//   database on the shared server (PGHOST/PGPORT/PGUSER) and a private Redis;
// - /health and /health/ready 200, one authenticated call (payment: a checkout
//   against the Stripe fake; gateway: magic-link sign-in, an API key, a chat
//   against the OpenAI fake), an anonymous call refused with 401;
// - the process runs as uid 1000 with no effective capabilities and cannot write
//   to its root filesystem;
// - SIGTERM stops it with exit code 0 within the drain deadline.
// Exits 1 with the container's last log lines on the first failed check.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { freePort, startPrivateRedis } from '@platform/testing';
import pg from 'pg';
import { type Fakes, gatewayFakeEnv, paymentFakeEnv, startFakes } from './fakes';

const exec = promisify(execFile);
const PAYMENT_KEY = `image-check-${randomBytes(12).toString('hex')}`;

type App = 'payment' | 'gateway';

const started = Date.now();
function say(line: string): void {
  process.stdout.write(`  [${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
}

class CheckFailed extends Error {}
function check(ok: boolean, what: string): void {
  if (!ok) throw new CheckFailed(what);
  say(`ok: ${what}`);
}

async function podman(args: string[], timeoutMs = 120_000): Promise<{ stdout: string; stderr: string }> {
  return exec('podman', args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
}

/** The hardening every container of the check gets, as infra/k8s asks of the pods. */
const HARDENED = [
  '--network=host',
  '--read-only',
  '--cap-drop=ALL',
  '--security-opt=no-new-privileges',
  '--pids-limit=512',
];

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
}

async function waitForStatus(url: string, status: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === status) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json };
}

async function authenticatedCall(app: App, base: string, fakes: Fakes, publicUrl: string): Promise<void> {
  if (app === 'payment') {
    const product = fakes.stripe.seedProduct({
      id: `prod_image_${randomBytes(4).toString('hex')}`,
      name: 'Pro',
    });
    const price = fakes.stripe.seedPrice({
      id: `price_image_${randomBytes(4).toString('hex')}`,
      product: product.id,
      unit_amount: 900,
      recurring: { interval: 'month' },
    });
    const body = {
      user_id: `user_${randomUUID()}`,
      email: 'ada@example.com',
      product_id: product.id,
      price_id: price.id,
      success_url: 'https://app.example.com/billing/done',
      cancel_url: 'https://app.example.com/billing/cancel',
    };
    const url = `${base}/api/v1/checkout/subscription`;
    const anonymous = await postJson(url, body);
    check(anonymous.status === 401, `anonymous checkout refused with 401 (got ${anonymous.status})`);
    const res = await postJson(url, body, { 'x-api-key': PAYMENT_KEY });
    check(
      res.status === 200 &&
        /^cs_test_/.test(String((res.json as { checkout_session_id?: string }).checkout_session_id)),
      `checkout with the API key answered 200 with a session (got ${res.status})`,
    );
    return;
  }
  const email = `image-check-${randomUUID()}@example.com`;
  const requested = await postJson(`${base}/api/v1/auth/request-magic-link`, { email });
  check(requested.status === 202, `magic link requested (got ${requested.status})`);
  const mail = await fakes.smtp.waitForMessage((m) => m.to.includes(email), 15_000);
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] ?? 'http://missing');
  const verified = await postJson(`${base}/api/v1/auth/verify-code`, { code: link.searchParams.get('code') });
  const cookie = verified.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  check(verified.status === 200 && cookie !== '', `signed in by magic link (got ${verified.status})`);
  const created = await postJson(
    `${base}/api/v1/auth/api-keys`,
    { name: 'imagecheck' },
    { cookie, origin: publicUrl },
  );
  const key = (created.json as { key?: string } | undefined)?.key;
  // The body is shown only when there is no key in it: a key never goes to the log.
  check(
    created.status === 201 && typeof key === 'string',
    created.status === 201
      ? 'API key created'
      : `API key created (got ${created.status} ${JSON.stringify(created.json)})`,
  );
  const chatBody = {
    lane: 'free',
    project_id: 'image-check',
    messages: [{ role: 'user', content: 'Say hello.' }],
  };
  const anonymous = await postJson(`${base}/api/v1/ai/chat/completions`, chatBody);
  check(anonymous.status === 401, `anonymous chat refused with 401 (got ${anonymous.status})`);
  fakes.openai.set({ content: 'Hello from the image.' });
  const chat = await postJson(`${base}/api/v1/ai/chat/completions`, chatBody, { 'x-api-key': key as string });
  check(
    chat.status === 200 && (chat.json as { content?: string }).content === 'Hello from the image.',
    `chat with the API key answered 200 through the provider fake (got ${chat.status})`,
  );
}

async function main(): Promise<void> {
  const [app, image] = process.argv.slice(2) as [App, string];
  if ((app !== 'payment' && app !== 'gateway') || !image) {
    process.stderr.write('usage: image-check.ts <payment|gateway> <image>\n');
    process.exit(2);
  }
  const admin = new pg.Client({
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    database: 'postgres',
  });
  const dbName = `image_check_${app}_${randomBytes(4).toString('hex')}`;
  const container = `platform-image-check-${app}-${randomBytes(4).toString('hex')}`;
  const cleanups: Array<() => Promise<unknown>> = [];
  let failed = false;
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${dbName}"`);
    cleanups.push(() => admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
    const databaseUrl = `postgresql://${admin.user}@${admin.host}:${admin.port}/${dbName}`;
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.close());
    const fakes = await startFakes();
    cleanups.push(() => Promise.all([fakes.stripe.close(), fakes.openai.close(), fakes.smtp.close()]));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    say(`database ${dbName}, private Redis :${redis.port}, service on :${port}`);

    const migrate = await podman([
      'run',
      '--rm',
      ...HARDENED,
      '-e',
      `DATABASE_URL=${databaseUrl}`,
      image,
      'node',
      '../../packages/db/dist/migrate-deploy.js',
    ]);
    check(
      /^applied: \d{14}_/.test(migrate.stdout.trim()),
      `migrate-deploy in the image: ${migrate.stdout.trim()}`,
    );

    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKERS: '2',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      ...(app === 'payment'
        ? {
            PAYMENT_MS_API_KEY: PAYMENT_KEY,
            STRIPE_SECRET_KEY: 'sk_test_image_check',
            ...paymentFakeEnv(fakes),
          }
        : gatewayFakeEnv(fakes, base)),
    };
    await podman([
      'run',
      '-d',
      '--name',
      container,
      ...HARDENED,
      '--stop-timeout=30',
      ...envArgs(env),
      image,
    ]);
    cleanups.unshift(() => podman(['rm', '-f', '-t', '0', container]).catch(() => undefined));

    check(await waitForStatus(`${base}/health`, 200, 90_000), 'GET /health 200');
    check(await waitForStatus(`${base}/health/ready`, 200, 30_000), 'GET /health/ready 200');
    await authenticatedCall(app, base, fakes, base);

    const probe = await podman([
      'exec',
      container,
      'node',
      '-e',
      `const fs = require('node:fs');
       const capEff = /CapEff:\\s*(\\S+)/.exec(fs.readFileSync('/proc/1/status', 'utf8'))[1];
       let write = 'written';
       try { fs.writeFileSync('/app/image-check', 'x'); } catch (e) { write = e.code; }
       process.stdout.write(JSON.stringify({ uid: process.getuid(), pid1Uid: fs.statSync('/proc/1').uid, capEff, write }));`,
    ]);
    const seen = JSON.parse(probe.stdout) as { uid: number; pid1Uid: number; capEff: string; write: string };
    check(
      seen.uid === 1000 && seen.pid1Uid === 1000,
      `runs as uid 1000, not root (uid ${seen.uid}, pid 1 ${seen.pid1Uid})`,
    );
    check(/^0+$/.test(seen.capEff), `no effective capabilities (CapEff ${seen.capEff})`);
    check(seen.write === 'EROFS', `root filesystem is read-only (write to /app: ${seen.write})`);

    const stopStart = Date.now();
    await podman(['stop', '-t', '30', container], 60_000);
    const stopMs = Date.now() - stopStart;
    const { stdout: exitCode } = await podman(['inspect', '--format', '{{.State.ExitCode}}', container]);
    check(
      exitCode.trim() === '0',
      `SIGTERM: graceful stop with exit code 0 in ${stopMs} ms (exit ${exitCode.trim()})`,
    );
  } catch (err) {
    failed = true;
    say(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
    const logs = await podman(['logs', '--tail', '40', container]).catch(() => undefined);
    if (logs) process.stdout.write(`--- last log lines of ${container} ---\n${logs.stdout}${logs.stderr}`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
  process.exit(failed ? 1 : 0);
}

void main();
