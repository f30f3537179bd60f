import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '@platform/db';
import {
  createApiKey,
  PrismaClient,
  TEST_LANES,
  upsertUserByEmail,
  writeTempJson,
} from '@platform/gateway/testing';
import {
  describeWith,
  freePort,
  needPostgres,
  needPrometheus,
  needRedis,
  type SharedServers,
  startSharedServers,
} from '@platform/testing';
import { parse } from 'yaml';
import { ROOT } from './support/compose';
import { type Fakes, gatewayFakeEnv, paymentFakeEnv, startFakes } from './support/fakes';
import { metricNamesOf } from './support/promql';
import {
  createServiceStorage,
  type ServiceProcess,
  type ServiceStorage,
  startService,
} from './support/services';

// Issue 43's Must show: Debian's Prometheus scrapes both services (real
// processes, their real /metrics behind METRICS_TOKEN) with the shipped
// configuration (infra/prometheus: only the target list and the token file are
// this test's), loads the shipped alert rules, and every metric the Grafana
// dashboard and the alert rules use exists in what it scraped.

const prometheusNeed = needPrometheus();
const INFRA = path.join(ROOT, 'infra');
const SYNTHETIC = new Set(['up']);

/** Every PromQL expression of the alert rules and of the dashboard's panels. */
function shippedExpressions(): { alerts: string[]; dashboard: string[] } {
  type Rules = { groups: Array<{ rules: Array<{ expr: string }> }> };
  const rules = parse(fs.readFileSync(path.join(INFRA, 'prometheus', 'alerts.yml'), 'utf8')) as Rules;
  type Dashboard = { panels: Array<{ targets?: Array<{ expr: string }> }> };
  const dash = JSON.parse(
    fs.readFileSync(path.join(INFRA, 'grafana', 'dashboards', 'platform.json'), 'utf8'),
  ) as Dashboard;
  return {
    alerts: rules.groups.flatMap((g) => g.rules.map((r) => r.expr)),
    dashboard: dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWith(
  'the Prometheus test (e2e/test/prometheus.int.test.ts)',
  needPostgres(),
  needRedis(),
  prometheusNeed,
)('Prometheus scrapes both services with the shipped configuration', () => {
  let servers: SharedServers;
  let fakes: Fakes;
  let storages: ServiceStorage[] = [];
  const services: ServiceProcess[] = [];
  let prometheus: ChildProcess | undefined;
  let promUrl: string;
  let promtool: string;
  let dir: string;
  const token = randomBytes(24).toString('hex');

  beforeAll(async () => {
    servers = await startSharedServers();
    fakes = await startFakes();
    storages = await Promise.all([
      createServiceStorage('payment', servers.databaseUrl),
      createServiceStorage('gateway', servers.databaseUrl),
    ]);
    const [paymentStorage, gatewayStorage] = storages as [ServiceStorage, ServiceStorage];
    const common = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      REDIS_URL: servers.redisUrl,
      METRICS_TOKEN: token,
    };
    const paymentPort = await freePort();
    const paymentKey = `prom-${randomBytes(8).toString('hex')}`;
    const serviceToken = `svc-${randomBytes(16).toString('hex')}`;
    const gatewaySecret = randomBytes(32).toString('hex');
    const [payment, gateway] = await Promise.all([
      startService(
        'payment',
        {
          ...common,
          ...paymentStorage.env,
          ...paymentFakeEnv(fakes),
          PAYMENT_MS_API_KEY: paymentKey,
          STRIPE_SECRET_KEY: 'sk_test_e2e_prometheus',
          STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(16).toString('hex')}`,
          GATEWAY_SERVICE_TOKEN: serviceToken,
        },
        { port: paymentPort },
      ),
      startService('gateway', {
        REDIS_KEY_PREFIX: `gateway-prom-${randomBytes(4).toString('hex')}:`,
        ...common,
        ...gatewayStorage.env,
        ...gatewayFakeEnv(fakes, 'https://gateway.example.com'),
        GATEWAY_SECRET: gatewaySecret,
        // Media is billed by cost: on a meter of its own, never the tokens meter.
        AI_LANES_CONFIG: writeTempJson('lanes.json', {
          ...TEST_LANES,
          media_billing: { meter: 'media_cost' },
        }),
        GATEWAY_SERVICE_TOKEN: serviceToken,
        PAYMENT_URL: `http://127.0.0.1:${paymentPort}`,
        PAYMENT_API_KEY: paymentKey,
      }),
    ]);
    services.push(payment, gateway);

    // Traffic, so that the labelled series exist: a failing target (attempt
    // errors, an open breaker), a fallback, a completion and a stream, both priced.
    const db = await openDatabase({ url: gatewayStorage.env.DATABASE_URL as string });
    const prisma = new PrismaClient({ adapter: db.adapter });
    const user = await upsertUserByEmail(prisma, `prom-${randomUUID()}@example.com`);
    const { key } = await createApiKey(
      { prisma, env: { GATEWAY_SECRET: gatewaySecret } },
      { userId: user.id, name: 'prom', scope: 'ai' },
    );
    await prisma.$disconnect();
    await db.close();
    fakes.openai.setFor('free-a', { status: 500 });
    fakes.openai.set({
      chunks: ['one ', 'two'],
      content: 'one two',
      usage: { prompt_tokens: 5, completion_tokens: 2 },
    });
    const body = { lane: 'free', project_id: 'prom', messages: [{ role: 'user', content: 'hi' }] };
    for (const p of ['/api/v1/ai/chat/completions', '/api/v1/ai/chat/stream']) {
      const res = await fetch(`http://127.0.0.1:${gateway.port}${p}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.text();
    }

    // The shipped configuration, with this test's targets and token.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-prometheus-'));
    fs.cpSync(path.join(INFRA, 'prometheus'), dir, { recursive: true });
    const target = (name: string, port: number) =>
      fs.writeFileSync(
        path.join(dir, 'targets', `${name}.json`),
        JSON.stringify([{ targets: [`127.0.0.1:${port}`], labels: { service: name } }]),
      );
    target('gateway', gateway.port);
    target('payment', payment.port);
    fs.writeFileSync(path.join(dir, 'secrets', 'metrics-token'), token);

    const binary = await prometheusNeed.start();
    promtool = path.join(path.dirname(binary), 'promtool');
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      binary,
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      const ready = await fetch(`${promUrl}/-/ready`).catch(() => undefined);
      if (ready?.ok) break;
      await pause(200);
    }
  }, 240_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all(storages.map((s) => s.drop()));
    await Promise.all([fakes?.stripe.close(), fakes?.openai.close(), fakes?.smtp.close()]);
    await servers?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function query<T>(p: string): Promise<T> {
    const res = await fetch(`${promUrl}${p}`);
    const body = (await res.json()) as { status: string; data: T };
    expect(body.status).toBe('success');
    return body.data;
  }

  it('promtool accepts the configuration and the rules as shipped', () => {
    for (const args of [
      ['check', 'config', path.join(dir, 'prometheus.yml')],
      ['check', 'rules', path.join(dir, 'alerts.yml')],
    ]) {
      const run = spawnSync(promtool, args, { encoding: 'utf8' });
      expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS');
      expect(run.status).toBe(0);
    }
  });

  it('both services are up, every alert rule loaded, every metric of the dashboard and alerts exported', async () => {
    const { alerts, dashboard } = shippedExpressions();
    const used = new Set([...alerts, ...dashboard].flatMap(metricNamesOf).filter((n) => !SYNTHETIC.has(n)));
    expect(used.size).toBeGreaterThan(10);
    // The first scrape comes within one scrape interval (15 s as shipped).
    let names: string[] = [];
    let upJobs: string[] = [];
    for (let i = 0; i < 120; i++) {
      names = await query<string[]>('/api/v1/label/__name__/values');
      const up = await query<{ result: Array<{ metric: { job: string }; value: [number, string] }> }>(
        `/api/v1/query?query=${encodeURIComponent('up')}`,
      );
      upJobs = up.result.filter((r) => r.value[1] === '1').map((r) => r.metric.job);
      if (upJobs.length === 2 && [...used].every((n) => names.includes(n))) break;
      await pause(500);
    }
    expect(upJobs.sort()).toEqual(['gateway', 'payment']);
    expect([...used].filter((n) => !names.includes(n))).toEqual([]);

    const rules = await query<{ groups: Array<{ rules: Array<{ name: string }> }> }>('/api/v1/rules');
    expect(rules.groups.flatMap((g) => g.rules).length).toBe(alerts.length);
  });
});
