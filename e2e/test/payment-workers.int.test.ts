import { randomBytes } from 'node:crypto';
import http from 'node:http';
import {
  describeWithSharedServers,
  eventually,
  parsePrometheusText,
  type SharedServers,
  startSharedServers,
} from '@platform/testing';
import { type Fakes, paymentFakeEnv, startFakes } from './support/fakes';
import {
  createServiceStorage,
  type ServiceProcess,
  type ServiceStorage,
  startService,
} from './support/services';

// Payment as production runs it with WORKERS=2 on Postgres and Redis: a
// node:cluster primary and two workers (the runner of @platform/service-kit,
// covered in depth by apps/gateway/test/cluster.int.test.ts). Here, from
// outside: both workers answer, the per-key rate limit stays exact across
// them (one Redis counter), /metrics sums them, and SIGTERM ends with exit 0.

// Postgres and Redis: TEST_DATABASE_URL/TEST_REDIS_URL (CI), else private ones
// started for this file; without those either, the file is skipped in one line.
const describeWithServers = describeWithSharedServers(
  'the payment workers test (e2e/test/payment-workers.int.test.ts)',
);
let servers: SharedServers | undefined;

const API_KEY = `e2e-workers-${randomBytes(8).toString('hex')}`;
const RATE_LIMIT = 20;
const REQUESTS = 26;

let fakes: Fakes;
let storage: ServiceStorage;
let payment: ServiceProcess;

/** A GET on a connection of its own, so the primary hands each to the next worker. */
function getFresh(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

type Line = { msg?: string; pid?: number; role?: string; workers?: number; req?: { url?: string } };

function lines(): Line[] {
  return payment
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

beforeAll(async () => {
  servers = await startSharedServers();
  fakes = await startFakes();
  storage = await createServiceStorage('payment', servers.databaseUrl);
  payment = await startService('payment', {
    ...storage.env,
    ...paymentFakeEnv(fakes),
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    REDIS_URL: servers.redisUrl,
    WORKERS: '2',
    PAYMENT_MS_API_KEY: API_KEY,
    PAYMENT_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    STRIPE_SECRET_KEY: 'sk_test_e2e_workers',
  });
}, 90_000);

afterAll(async () => {
  await payment?.stop();
  await storage?.drop();
  await Promise.all([fakes?.stripe.close(), fakes?.openai.close(), fakes?.smtp.close()]);
  await servers?.close();
}, 60_000);

describeWithServers('payment with WORKERS=2', () => {
  it('runs a primary and two workers', async () => {
    expect(await eventually(async () => lines().filter((l) => l.msg === 'listening').length === 2)).toBe(
      true,
    );
    const primary = lines().find((l) => l.msg === 'starting workers');
    expect(primary).toMatchObject({ role: 'primary', workers: 2 });
    const workers = new Set(
      lines()
        .filter((l) => l.msg === 'listening')
        .map((l) => l.pid),
    );
    expect(workers.size).toBe(2);
    expect(workers.has(primary?.pid)).toBe(false);
  });

  it('keeps the per-key rate limit exact across both workers and sums /metrics over them', async () => {
    const path = `/api/v1/subscriptions/workers-user-${randomBytes(4).toString('hex')}/prod_workers`;
    const statuses: number[] = [];
    for (let i = 0; i < REQUESTS; i++)
      statuses.push((await getFresh(payment.port, path, { 'x-api-key': API_KEY })).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(REQUESTS - RATE_LIMIT);
    expect(statuses.slice(0, RATE_LIMIT).every((s) => s !== 429 && s < 500)).toBe(true);

    // Both workers served them (each access-log line carries its process id).
    const served = () => lines().filter((l) => l.req?.url === path);
    expect(await eventually(async () => served().length === REQUESTS)).toBe(true);
    expect(new Set(served().map((l) => l.pid)).size).toBe(2);

    const metrics = await getFresh(payment.port, '/metrics');
    expect(metrics.status).toBe(200);
    const family = parsePrometheusText(metrics.body).find((f) => f.name === 'http_requests_total');
    const limited = (family?.metrics ?? []).filter((m) => m.labels?.status === '429');
    // One series per label set, summed over the workers.
    expect(limited).toHaveLength(1);
    expect(Number(limited[0]?.value)).toBe(REQUESTS - RATE_LIMIT);
  });

  it('stops both workers on SIGTERM and exits 0', async () => {
    expect(await payment.stop()).toBe(0);
    expect(lines().some((l) => l.role === 'primary' && l.msg === 'all workers stopped')).toBe(true);
  });
});
