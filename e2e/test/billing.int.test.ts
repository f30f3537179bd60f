import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
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
  buildEvent,
  describeWithSharedServers,
  freePort,
  type SharedServers,
  signWebhookPayload,
  startSharedServers,
} from '@platform/testing';
import { ROOT } from './support/compose';
import {
  closeFakes,
  type Fakes,
  gatewayFakeEnv,
  paymentFakeEnv,
  seedTokenMeter,
  startFakes,
} from './support/fakes';
import { waitUntilRefusing } from './support/fleet';
import {
  createServiceStorage,
  expectStatus,
  type ServiceProcess,
  type ServiceStorage,
  startService,
} from './support/services';
import { pause, until } from './support/until';

// Issue 25's Must show: AI usage billed through Stripe, end to end. Payment
// and two gateway instances as real processes on fresh Postgres databases and
// the shared Redis, the Stripe and OpenAI fakes. A mix of completions, streams
// (some aborted) and media calls goes through both gateways while payment is
// stopped for a while, one gateway is SIGKILLed and Stripe answers 429 and
// then 500 for a while. Afterwards Stripe's meter total of every customer
// equals the gateway ledger's total exactly, no event was counted twice, and
// the three-way reconciliation (gateway billing-export | payment reconcile)
// reports no difference. Then the paid lane: refused without a subscription,
// served with it, refused again within the documented delay of a cancellation.

// Postgres and Redis: TEST_DATABASE_URL/TEST_REDIS_URL (CI), else private ones
// started for this file; without those either, the file is skipped in one line.
const describeWithServers = describeWithSharedServers('the billing test (e2e/test/billing.int.test.ts)');
let servers: SharedServers | undefined;
let REDIS_URL: string;

const PAYMENT_KEY = `e2e-billing-${randomBytes(8).toString('hex')}`;
const SERVICE_TOKEN = `svc-${randomBytes(16).toString('hex')}`;
const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;
const PAID_PRODUCT = `prod_gold_${randomBytes(4).toString('hex')}`;
const METER_EVENT = 'ai_tokens';
const TOKENS_PRODUCT = `prod_tokens_${randomBytes(4).toString('hex')}`;
const TOKENS_PRICE = `price_tokens_${randomBytes(4).toString('hex')}`;
// Longer than the whole paid-lane test: a cancellation seen in time was the webhook notice, not the expiry.
const SUBSCRIPTION_CACHE_SECONDS = 120;

let fakes: Fakes;
let paymentStorage: ServiceStorage;
let gatewayStorage: ServiceStorage;
let paymentEnv: Record<string, string>;
let gatewayEnv: Record<string, string>;
let paymentPort: number;
let payment: ServiceProcess | undefined;
const gateways: ServiceProcess[] = [];
let gwDb: Awaited<ReturnType<typeof openDatabase>>;
let prisma: PrismaClient;

describeWithServers('AI usage billed through Stripe', () => {
  beforeAll(async () => {
    servers = await startSharedServers();
    REDIS_URL = servers.redisUrl;
    fakes = await startFakes();
    // Usage lands on an invoice only through a metered price on the meter (issue 40): every user
    // below subscribes to one; the paid lane's product is itself such a price.
    const meter = seedTokenMeter(fakes, { event: METER_EVENT, product: TOKENS_PRODUCT, price: TOKENS_PRICE });
    const goldPrice = fakes.stripe.seedProduct({ id: PAID_PRODUCT, name: 'Gold' });
    fakes.stripe.seedPrice({
      id: `price_gold_${randomBytes(4).toString('hex')}`,
      product: goldPrice.id,
      unit_amount: 2,
      recurring: { interval: 'month', meter: meter.id },
    });
    fakes.openai.set({
      content: 'one two three four five',
      usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 },
    });
    [paymentStorage, gatewayStorage] = await Promise.all([
      createServiceStorage('payment', servers.databaseUrl),
      createServiceStorage('gateway', servers.databaseUrl),
    ]);
    paymentPort = await freePort();
    const gatewayPort = await freePort();
    const lanes = {
      ...TEST_LANES,
      // This test reconciles tokens on one meter: media (billed by cost by default) stays off it.
      media_billing: { quantity: 'total_tokens' },
      lanes: {
        ...TEST_LANES.lanes,
        premium: { ...TEST_LANES.lanes.premium, billing: { mode: 'paid', product: PAID_PRODUCT } },
      },
    };
    const common = { NODE_ENV: 'production', LOG_LEVEL: 'info', REDIS_URL };
    paymentEnv = {
      ...common,
      ...paymentStorage.env,
      ...paymentFakeEnv(fakes),
      PAYMENT_MS_API_KEY: PAYMENT_KEY,
      PAYMENT_RATE_LIMIT_PER_MINUTE: '100000',
      STRIPE_SECRET_KEY: 'sk_test_e2e_billing',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      PAYMENT_USAGE_METERS: `tokens=${METER_EVENT}`,
      PAYMENT_USAGE_SENDER_IDLE_MS: '100',
      PAYMENT_USAGE_RETRY_BASE_MS: '100',
      PAYMENT_USAGE_RETRY_MAX_MS: '1000',
      PAYMENT_USAGE_SENDER_LEASE_SECONDS: '5',
      GATEWAY_SUBSCRIPTION_NOTIFY_URL: `http://127.0.0.1:${gatewayPort}/api/v1/billing/subscription-changes`,
      GATEWAY_SERVICE_TOKEN: SERVICE_TOKEN,
    };
    gatewayEnv = {
      // Its own keys: another test's gateway on the same Redis must not drain this one's ledger.
      REDIS_KEY_PREFIX: `gateway-billing-${randomBytes(4).toString('hex')}:`,
      ...common,
      ...gatewayStorage.env,
      ...gatewayFakeEnv(fakes, 'https://gateway.example.com'),
      AI_LANES_CONFIG: writeTempJson('lanes.json', lanes),
      AI_RATE_LIMIT_PER_MINUTE: '100000',
      AI_DAILY_TOKEN_BUDGET: '100000000',
      GATEWAY_SERVICE_TOKEN: SERVICE_TOKEN,
      PAYMENT_URL: `http://127.0.0.1:${paymentPort}`,
      PAYMENT_API_KEY: PAYMENT_KEY,
      BILLING_IDLE_MS: '100',
      // A SIGKILLed instance's ledger entries are taken over by the other after this.
      USAGE_LEDGER_CLAIM_IDLE_MS: '2000',
      BILLING_RETRY_BASE_MS: '100',
      BILLING_RETRY_MAX_MS: '1000',
      BILLING_LEASE_SECONDS: '2',
      BILLING_SUBSCRIPTION_CACHE_SECONDS: String(SUBSCRIPTION_CACHE_SECONDS),
    };
    const [p, a, b] = await Promise.all([
      startService('payment', paymentEnv, { port: paymentPort }),
      startService('gateway', gatewayEnv, { port: gatewayPort }),
      startService('gateway', gatewayEnv),
    ]);
    payment = p;
    gateways.push(a, b);
    gwDb = await openDatabase({ url: gatewayStorage.env.DATABASE_URL });
    prisma = new PrismaClient({ adapter: gwDb.adapter });
  }, 180_000);

  afterAll(async () => {
    await Promise.all([payment?.stop(), ...gateways.map((g) => g.stop())]);
    await prisma?.$disconnect();
    await gwDb?.close();
    await Promise.all([paymentStorage?.drop(), gatewayStorage?.drop()]);
    await closeFakes(fakes);
    await servers?.close();
  }, 60_000);

  type User = { id: string; key: string };

  async function newUser(): Promise<User> {
    const user = await upsertUserByEmail(prisma, `billing-${randomUUID()}@example.com`);
    const { key } = await createApiKey(
      { prisma, env: { GATEWAY_SECRET: gatewayEnv.GATEWAY_SECRET as string } },
      { userId: user.id, name: 'billing', scope: 'ai' },
    );
    return { id: user.id, key };
  }

  /** Subscribes the user through payment's checkout; Stripe's webhook tells payment. Returns the subscription id. */
  async function subscribe(userId: string, productId: string, priceId: string): Promise<string> {
    const checkout = await fetch(`http://127.0.0.1:${paymentPort}/api/v1/checkout/subscription`, {
      method: 'POST',
      headers: { 'x-api-key': PAYMENT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: userId,
        email: `${userId}@example.com`,
        product_id: productId,
        price_id: priceId,
        success_url: 'https://app.example.com/done',
        cancel_url: 'https://app.example.com/cancel',
      }),
    });
    expect(checkout.status).toBe(200);
    const { checkout_session_id: sessionId } = (await checkout.json()) as { checkout_session_id: string };
    const session = fakes.stripe.completeCheckoutSession(sessionId);
    await sendWebhook(buildEvent('checkout.session.completed', session));
    return session.subscription as string;
  }

  const url = (g: ServiceProcess, p: string) => `http://127.0.0.1:${g.port}${p}`;

  function post(g: ServiceProcess, p: string, key: string, body: unknown, signal?: AbortSignal) {
    return fetch(url(g, p), {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  const chatBody = (lane = 'standard') => ({
    lane,
    project_id: 'billing',
    messages: [{ role: 'user', content: 'Hi.' }],
  });

  /** One call of kind `i % 5` on gateway `g`; resolves when it is over (answered, or aborted by us). */
  async function oneCall(g: ServiceProcess, user: User, i: number): Promise<void> {
    switch (i % 5) {
      case 0:
      case 1: {
        const res = await post(g, '/api/v1/ai/chat/completions', user.key, chatBody());
        await expectStatus(res, 200, g);
        await res.arrayBuffer();
        return;
      }
      case 2: {
        const res = await post(g, '/api/v1/ai/chat/stream', user.key, chatBody());
        await expectStatus(res, 200, g);
        await res.text();
        return;
      }
      case 3: {
        // Aborted after the first bytes: the gateway charges what was produced.
        const abort = new AbortController();
        const res = await post(g, '/api/v1/ai/chat/stream', user.key, chatBody(), abort.signal);
        const reader = res.body?.getReader();
        await reader?.read();
        abort.abort();
        await reader?.cancel().catch(() => {});
        return;
      }
      default: {
        const res = await post(g, '/api/v1/ai/image', user.key, { project_id: 'billing', prompt: 'a cat' });
        await expectStatus(res, 200, g);
        await res.arrayBuffer();
      }
    }
  }

  async function traffic(users: User[], calls: number, offset: number): Promise<void> {
    const running: Promise<void>[] = [];
    for (let i = 0; i < calls; i++) {
      const g = gateways[i % 2] as ServiceProcess;
      running.push(oneCall(g, users[i % users.length] as User, i + offset));
      if (running.length >= 4) await Promise.all(running.splice(0));
    }
    await Promise.all(running);
  }

  /** The gateway ledger's total tokens of a user (every record; none is BYOK or on a free lane here). */
  async function ledgerTotal(userId: string): Promise<{ tokens: number; billable: number }> {
    const [row] = await gwDb.query<{ tokens: string; billable: string }>(
      'SELECT COALESCE(SUM(total_tokens), 0)::text AS tokens, COUNT(*) FILTER (WHERE total_tokens > 0)::text AS billable FROM usage_records WHERE user_id = $1',
      [userId],
    );
    return { tokens: Number(row?.tokens ?? 0), billable: Number(row?.billable ?? 0) };
  }

  async function customerOf(userId: string): Promise<string | undefined> {
    const db = await openDatabase({ url: paymentStorage.env.DATABASE_URL });
    try {
      const [row] = await db.query<{ id: string }>(
        'SELECT stripe_customer_id AS id FROM customers WHERE user_id = $1',
        [userId],
      );
      return row?.id;
    } finally {
      await db.close();
    }
  }

  /** Runs a TypeScript entry point of an app as the image runs its dist/ twin; resolves with exit code and output. */
  function runEntry(
    app: 'payment' | 'gateway',
    entry: string,
    args: string[],
    env: Record<string, string>,
    stdin?: string,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', entry, ...args], {
        cwd: path.join(ROOT, 'apps', app),
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      child.stdin.end(stdin ?? '');
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  async function metricValue(g: ServiceProcess, name: string): Promise<number> {
    const text = await (await fetch(url(g, '/metrics'))).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : Number.NaN;
  }

  it('bills every ledger record exactly once through payment and worker outages, a SIGKILL and Stripe failures', async () => {
    const users = await Promise.all([newUser(), newUser(), newUser()]);
    for (const user of users) await subscribe(user.id, TOKENS_PRODUCT, TOKENS_PRICE);

    await traffic(users, 15, 0);

    // Payment stopped for a while: the gateways keep serving; the shipper keeps its cursor and lags.
    await payment?.stop();
    await waitUntilRefusing(paymentPort);
    await traffic(users, 15, 15);
    await until(
      'the shipper to report lag',
      async () =>
        (await metricValue(gateways[0] as ServiceProcess, 'gateway_billing_lag_seconds')) > 0 ||
        (await metricValue(gateways[1] as ServiceProcess, 'gateway_billing_lag_seconds')) > 0
          ? true
          : undefined,
      10_000,
    );

    // A gateway instance killed mid-traffic, then replaced (its failure count dies with it).
    const killed = gateways[1] as ServiceProcess;
    const killedFailures = await metricValue(killed, 'gateway_billing_ship_failures_total').then((v) =>
      Number.isNaN(v) ? 0 : v,
    );
    const inFlight = traffic(users, 6, 30).catch(() => {});
    await pause(150);
    await killed.kill('SIGKILL');
    await inFlight;
    gateways[1] = await startService('gateway', gatewayEnv);

    // Payment back, with Stripe rate limiting (429) until the backlog has met it, then failing (500) for a while.
    fakes.stripe.meters.outage({ status: 429, forMs: 60_000, retryAfterSeconds: 1 });
    payment = await startService('payment', paymentEnv, { port: paymentPort });
    const answered = (status: number) =>
      fakes.stripe.requests.some((r) => r.path === '/v1/billing/meter_events' && r.status === status);
    await until('Stripe to rate limit the backlog', async () => (answered(429) ? true : undefined), 30_000);
    await traffic(users, 10, 40);
    await pause(1000);
    fakes.stripe.clearFaults();
    fakes.stripe.meters.outage({ status: 500, forMs: 2000 });
    await traffic(users, 10, 50);
    await until('Stripe to fail a send', async () => (answered(500) ? true : undefined), 10_000);

    // Everything arrives: per customer, Stripe's meter total equals the ledger's.
    for (const user of users) {
      const customer = await until('a Stripe customer for the user', () => customerOf(user.id), 60_000);
      await until(
        `Stripe's total of ${user.id} to reach the ledger's`,
        async () => {
          const { tokens } = await ledgerTotal(user.id);
          return tokens > 0 && fakes.stripe.meters.total(METER_EVENT, customer) === tokens ? true : undefined;
        },
        90_000,
      );
    }
    // No event counted twice: one accepted meter event per billable ledger record, each identifier once.
    const events = fakes.stripe.meters.events();
    const identifiers = events.map((e) => e.identifier);
    expect(new Set(identifiers).size).toBe(identifiers.length);
    let billable = 0;
    for (const user of users) billable += (await ledgerTotal(user.id)).billable;
    expect(identifiers.length).toBe(billable);
    const [ledgerIds] = [
      await gwDb.query<{ id: string }>(
        'SELECT request_id::text AS id FROM usage_records WHERE total_tokens > 0',
      ),
    ];
    expect(new Set(identifiers)).toEqual(new Set(ledgerIds.map((r) => r.id)));

    // The faults really happened: Stripe answered meter events with 429 and 500, and the shipper failed while payment was down.
    const meterStatuses = new Set(
      fakes.stripe.requests.filter((r) => r.path === '/v1/billing/meter_events').map((r) => r.status),
    );
    expect([...meterStatuses]).toEqual(expect.arrayContaining([200, 429, 500]));
    const failures = await Promise.all(
      gateways.map((g) => metricValue(g, 'gateway_billing_ship_failures_total')),
    );
    expect(killedFailures + failures.reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0)).toBeGreaterThan(0);

    // The three-way reconciliation finds nothing.
    const today = new Date().toISOString().slice(0, 10);
    const exported = await runEntry(
      'gateway',
      'src/billing-export-main.ts',
      ['--from', today, '--to', today],
      gatewayEnv,
    );
    expect(exported.code).toBe(0);
    const expected = JSON.parse(exported.stdout) as Array<{ user_id: string; value: number }>;
    expect(expected.map((e) => e.user_id).sort()).toEqual(users.map((u) => u.id).sort());
    const reconciled = await runEntry(
      'payment',
      'src/reconcile-main.ts',
      ['--from', today, '--to', today, '--expected', '-'],
      paymentEnv,
      exported.stdout,
    );
    expect(reconciled.stdout).not.toContain('DIFF');
    expect(reconciled.code).toBe(0);
  }, 300_000);

  it('a paid lane refuses a user without the subscription, serves one with it, and a cancellation takes effect', async () => {
    const user = await newUser();
    const [a, b] = gateways as [ServiceProcess, ServiceProcess];
    const premium = (g: ServiceProcess) =>
      post(g, '/api/v1/ai/chat/completions', user.key, chatBody('premium'));

    const refused = await premium(a);
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ error: 'subscription required' });
    expect((await premium(b)).status).toBe(402);

    // A subscription to another product with a price on the meter does not open the paid lane.
    await subscribe(user.id, TOKENS_PRODUCT, TOKENS_PRICE);
    // Subscribe through payment's checkout; Stripe's webhook reaches payment, which tells the gateway.
    const price = [...fakes.stripe.store.prices.values()].find((p) => p.product === PAID_PRODUCT);
    const subscriptionId = await subscribe(user.id, PAID_PRODUCT, price?.id ?? '');

    // Both instances forget the cached refusal (the notice reached a, a broadcast it): served within seconds.
    for (const g of [a, b])
      await until(
        'the paid lane to serve the subscriber',
        async () => ((await premium(g)).status === 200 ? true : undefined),
        5_000,
      );

    // Cancelled in Stripe; the webhook makes it take effect well within the cache's lifetime.
    const cancelledAt = Date.now();
    const cancelled = fakes.stripe.updateSubscription(subscriptionId, { status: 'canceled' });
    await sendWebhook(buildEvent('customer.subscription.deleted', cancelled));
    for (const g of [a, b])
      await until(
        'the cancellation to take effect',
        async () => ((await premium(g)).status === 402 ? true : undefined),
        5_000,
      );
    expect(Date.now() - cancelledAt).toBeLessThan(SUBSCRIPTION_CACHE_SECONDS * 1000);
  }, 60_000);
});

async function sendWebhook(event: unknown): Promise<void> {
  const payload = JSON.stringify(event);
  const res = await fetch(`http://127.0.0.1:${paymentPort}/webhooks/stripe`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': signWebhookPayload(payload, WEBHOOK_SECRET),
    },
    body: payload,
  });
  expect(res.status).toBe(200);
}
