import { randomBytes, randomUUID } from 'node:crypto';
import { createRedisStore, type RedisKeyValueStore } from '@platform/db';
import {
  describeWith,
  needNginx,
  needPostgres,
  needRedis,
  type SharedServers,
  startSharedServers,
} from '@platform/testing';
import {
  addressOf,
  type Fleet,
  GATEWAY_HOST,
  PAYMENT_HOST,
  startFleet,
  waitUntilRefusing,
} from './support/fleet';
import type { ProxyResponse } from './support/http';
import type { ServiceProcess } from './support/services';

// Two instances of each service, in production mode, on one Postgres database
// per service and one Redis, behind Debian's nginx with the shipped config
// (one upstream server per instance). What must hold for the whole fleet is
// checked by sending the steps of one scenario to different instances on
// purpose (A, then B); the proxy's share of the work is read from its access
// log. At the end one instance of each service goes away mid-traffic. All
// scenarios share one fleet (four service processes start once per file),
// hence one file.

// Postgres and Redis: TEST_DATABASE_URL/TEST_REDIS_URL (CI), else private ones
// started for this file; without those either, the file is skipped in one line.
const describeWithServers = describeWith(needPostgres(), needRedis(), needNginx());
let servers: SharedServers | undefined;

const AI_RATE_LIMIT = 30;
/**
 * Each request reserves its prompt and its max_tokens (or the 4,096-token
 * allowance, capped by what remains) until it settles; the budget must leave
 * room for the concurrent requests of the drain scenario (CHAT_SMALL).
 */
const DAILY_TOKENS = 1000;
const PAYMENT_RATE_LIMIT = 20;
// One key for the payment rate-limit scenario, one for everything else: limits are per key.
const PAYMENT_KEY_LIMITED = `e2e-scale-limited-${randomBytes(8).toString('hex')}`;
const PAYMENT_KEY = `e2e-scale-payment-${randomBytes(8).toString('hex')}`;

let fleet: Fleet;
let redis: RedisKeyValueStore;
// Shorthands, set once the fleet runs.
let payment: Fleet['payment'];
let gateway: Fleet['gateway'];
const KEY_PREFIX = `gateway-scale-out-${randomBytes(4).toString('hex')}:`;
let viaProxy: Fleet['viaProxy'];
let direct: Fleet['direct'];

beforeAll(async () => {
  servers = await startSharedServers();
  fleet = await startFleet({
    databaseUrl: servers.databaseUrl,
    redisUrl: servers.redisUrl,
    paymentEnv: {
      PAYMENT_MS_API_KEY: `${PAYMENT_KEY},${PAYMENT_KEY_LIMITED}`,
      PAYMENT_RATE_LIMIT_PER_MINUTE: String(PAYMENT_RATE_LIMIT),
      STRIPE_SECRET_KEY: 'sk_test_e2e_scale_out',
    },
    gatewayEnv: {
      // Its own keys: another test's gateway on the same Redis must not drain this one's ledger.
      REDIS_KEY_PREFIX: KEY_PREFIX,
      AI_RATE_LIMIT_PER_MINUTE: String(AI_RATE_LIMIT),
      AI_DAILY_TOKEN_BUDGET: String(DAILY_TOKENS),
    },
  });
  ({ payment, gateway, viaProxy, direct } = fleet);
  redis = createRedisStore({ url: servers.redisUrl, keyPrefix: KEY_PREFIX });
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  await redis?.close();
  await servers?.close();
}, 60_000);

afterEach(() => fleet.openai.reset());

type Session = { cookie: string; userId: string };

/** A magic code for a new address, requested through the proxy. */
async function requestCode(email: string): Promise<string> {
  const requested = await viaProxy({
    host: GATEWAY_HOST,
    path: '/api/v1/auth/request-magic-link',
    body: { email },
  });
  expect(requested.status).toBe(202);
  const mail = await fleet.smtp.waitForMessage((m) => m.to.includes(email), 10_000);
  const code = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] ?? 'http://missing').searchParams.get('code');
  if (!code) throw new Error('no code in the mail');
  return code;
}

function sessionOf(res: ProxyResponse): Session {
  const cookie = [res.headers['set-cookie'] ?? []].flat()[0]?.split(';')[0] ?? '';
  return { cookie, userId: (res.json as { user: { id: string } }).user.id };
}

async function signIn(): Promise<Session> {
  const code = await requestCode(`scale-${randomUUID()}@example.com`);
  const verified = await viaProxy({ host: GATEWAY_HOST, path: '/api/v1/auth/verify-code', body: { code } });
  expect(verified.status).toBe(200);
  return sessionOf(verified);
}

const createKey = (instance: ServiceProcess, session: Session) =>
  direct(instance, {
    host: GATEWAY_HOST,
    path: '/api/v1/auth/api-keys',
    headers: { cookie: session.cookie, origin: fleet.publicUrl },
    body: { name: 'scale' },
  });

async function newApiKey(session: Session): Promise<{ key: string; keyId: string }> {
  const created = await createKey(gateway[0], session);
  expect(created.status).toBe(201);
  const body = created.json as { key: string; key_id: string };
  return { key: body.key, keyId: body.key_id };
}

const CHAT = { lane: 'free', project_id: 'scale', messages: [{ role: 'user', content: 'Hi.' }] };
/** Reserves a few tokens only, so twelve of them fit the daily budget at once. */
const CHAT_SMALL = { ...CHAT, max_tokens: 16 };
const chatOn = (instance: ServiceProcess, apiKey: string) =>
  direct(instance, {
    host: GATEWAY_HOST,
    path: '/api/v1/ai/chat/completions',
    headers: { 'x-api-key': apiKey },
    body: CHAT,
  });

/** The user's token counter of today, as every instance reads it. */
async function tokensUsed(userId: string): Promise<number> {
  const value = await redis.get(`budget:tokens:${userId}:${new Date().toISOString().slice(0, 10)}`);
  return Number(value ?? 0);
}

/** The settle happens before the answer, but read the shared counter until it shows the total (or give up). */
async function waitForTokens(userId: string, expected: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await tokensUsed(userId)) < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(await tokensUsed(userId)).toBe(expected);
}

function checkoutBody(userId: string, priceId: string, productId: string) {
  return {
    user_id: userId,
    email: 'scale@example.com',
    product_id: productId,
    price_id: priceId,
    success_url: 'https://app.example.com/billing/done',
    cancel_url: 'https://app.example.com/billing/cancel',
  };
}

function seedPlan(): { productId: string; priceId: string } {
  const product = fleet.stripe.seedProduct({
    id: `prod_scale_${randomBytes(4).toString('hex')}`,
    name: 'Pro',
  });
  const price = fleet.stripe.seedPrice({
    id: `price_scale_${randomBytes(4).toString('hex')}`,
    product: product.id,
    unit_amount: 900,
    recurring: { interval: 'month' },
  });
  return { productId: product.id, priceId: price.id };
}

describeWithServers('two instances of each service behind one proxy', () => {
  it('applied each migration once although both instances started together on an empty database', () => {
    for (const pair of [payment, gateway]) {
      const applying = pair.filter((instance) => instance.output().includes('"msg":"migrations applied"'));
      expect(applying).toHaveLength(1);
    }
  });

  it('spreads requests over both instances of each service', async () => {
    const ids = Array.from({ length: 8 }, () => randomUUID());
    const responses = await Promise.all(
      ids.map((id, i) =>
        viaProxy({
          host: i % 2 ? PAYMENT_HOST : GATEWAY_HOST,
          path: '/health',
          headers: { 'x-request-id': id },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(ids.map(() => 200));
    await fleet.waitForLogged(ids);
    const served = new Set(fleet.upstreamsOf(ids));
    expect(served).toEqual(new Set([...payment, ...gateway].map(addressOf)));
  });

  it('counts the per-key AI rate limit once for the fleet: exactly the limit passes, spread over both', async () => {
    const { key } = await newApiKey(await signIn());
    fleet.openai.set({ content: 'ok', usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
    const statuses: number[] = [];
    for (let i = 0; i < AI_RATE_LIMIT; i += 1)
      statuses.push((await chatOn(gateway[i % 2] as ServiceProcess, key)).status);
    expect(statuses).toEqual(statuses.map(() => 200));
    const [onA, onB] = await Promise.all([chatOn(gateway[0], key), chatOn(gateway[1], key)]);
    expect([onA.status, onB.status]).toEqual([429, 429]);
    expect(onB.json).toMatchObject({ error: 'rate_limited' });
    expect(Number(onB.headers['retry-after'])).toBeGreaterThan(0);
  });

  it("counts the per-key payment rate limit once for the fleet, and another key's window stays its own", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < PAYMENT_RATE_LIMIT; i += 1) {
      const res = await direct(payment[i % 2] as ServiceProcess, {
        host: PAYMENT_HOST,
        path: '/api/v1/checkout/subscription',
        headers: { 'x-api-key': PAYMENT_KEY_LIMITED },
        body: {},
      });
      statuses.push(res.status);
    }
    // Invalid bodies (422): the limiter counts every authenticated request, before validation.
    expect(statuses).toEqual(statuses.map(() => 422));
    const limited = await Promise.all(
      payment.map((instance) =>
        direct(instance, {
          host: PAYMENT_HOST,
          path: '/api/v1/checkout/subscription',
          headers: { 'x-api-key': PAYMENT_KEY_LIMITED },
          body: {},
        }),
      ),
    );
    expect(limited.map((r) => r.status)).toEqual([429, 429]);
    const other = await direct(payment[1], {
      host: PAYMENT_HOST,
      path: '/api/v1/checkout/subscription',
      headers: { 'x-api-key': PAYMENT_KEY },
      body: {},
    });
    expect(other.status).toBe(422);
  });

  it('charges the daily token budget to one counter: exact totals, refused on both once spent', async () => {
    const session = await signIn();
    const { key } = await newApiKey(session);
    fleet.openai.set({
      content: 'ok',
      usage: { prompt_tokens: 100, completion_tokens: 200, total_tokens: 300 },
    });
    // 0, 300, 600 and 900 tokens used before each call: all under 1,000.
    for (let i = 0; i < 4; i += 1) {
      const res = await chatOn(gateway[i % 2] as ServiceProcess, key);
      expect(res.status).toBe(200);
      await waitForTokens(session.userId, 300 * (i + 1));
    }
    const [onA, onB] = await Promise.all([chatOn(gateway[0], key), chatOn(gateway[1], key)]);
    expect([onA.status, onB.status]).toEqual([429, 429]);
    expect(await tokensUsed(session.userId)).toBe(1200);
  });

  it('refuses a revoked key on the other instance at once, although it had just served that key', async () => {
    const session = await signIn();
    const { key, keyId } = await newApiKey(session);
    const me = (instance: ServiceProcess) =>
      direct(instance, { host: GATEWAY_HOST, path: '/api/v1/me', headers: { 'x-api-key': key } });
    // Both instances have now looked the key up (and cached it).
    expect((await me(gateway[0])).status).toBe(200);
    expect((await me(gateway[1])).status).toBe(200);

    const revoked = await direct(gateway[0], {
      host: GATEWAY_HOST,
      path: '/api/v1/auth/api-keys/revoke',
      headers: { cookie: session.cookie, origin: fleet.publicUrl },
      body: { key_id: keyId },
    });
    expect(revoked.status).toBe(200);
    const onB = await me(gateway[1]);
    expect(onB.status).toBe(401);
    expect(onB.json).toMatchObject({ error: 'invalid api key' });
    expect((await me(gateway[0])).status).toBe(401);
  });

  it('accepts a magic code once in the whole fleet, also when two instances get it at the same moment', async () => {
    const verify = (instance: ServiceProcess, code: string) =>
      direct(instance, { host: GATEWAY_HOST, path: '/api/v1/auth/verify-code', body: { code } });

    const code = await requestCode(`scale-${randomUUID()}@example.com`);
    expect((await verify(gateway[0], code)).status).toBe(200);
    const replay = await verify(gateway[1], code);
    expect(replay.status).toBe(400);
    expect(replay.json).toMatchObject({ error: 'invalid or expired code' });

    const raced = await requestCode(`scale-${randomUUID()}@example.com`);
    const both = await Promise.all([verify(gateway[0], raced), verify(gateway[1], raced)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('creates at most 5 keys per user under concurrent creates spread over both instances', async () => {
    const session = await signIn();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createKey(gateway[i % 2] as ServiceProcess, session)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 400, 400, 400, 400, 400]);
    expect(results.filter((r) => r.status === 400).map((r) => r.json)).toEqual(
      Array.from({ length: 5 }, () => expect.objectContaining({ error: 'maximum_keys' })),
    );
    const list = await direct(gateway[1], {
      host: GATEWAY_HOST,
      path: '/api/v1/auth/api-keys/list',
      headers: { cookie: session.cookie },
    });
    expect(JSON.stringify(list.json).match(/"key_id"/g)).toHaveLength(5);
  });

  it("creates one Stripe customer per user when that user's first checkouts race on both instances", async () => {
    const { productId, priceId } = seedPlan();
    const userId = `user_${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        direct(payment[i % 2] as ServiceProcess, {
          host: PAYMENT_HOST,
          path: '/api/v1/checkout/subscription',
          headers: { 'x-api-key': PAYMENT_KEY },
          body: checkoutBody(userId, priceId, productId),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const customers = [...fleet.stripe.store.customers.values()].filter((c) => c.metadata.user_id === userId);
    expect(customers).toHaveLength(1);
    const sessions = results.map((r) =>
      fleet.stripe.store.checkoutSessions.get(
        (r.json as { checkout_session_id: string }).checkout_session_id,
      ),
    );
    expect(new Set(sessions.map((s) => s?.customer))).toEqual(new Set([customers[0]?.id]));
  });

  it('honours an Idempotency-Key across instances: same session for a retry, 409 for another body', async () => {
    const { productId, priceId } = seedPlan();
    const userId = `user_${randomUUID()}`;
    const idempotencyKey = randomUUID();
    const checkout = (instance: ServiceProcess, body: object) =>
      direct(instance, {
        host: PAYMENT_HOST,
        path: '/api/v1/checkout/subscription',
        headers: { 'x-api-key': PAYMENT_KEY, 'idempotency-key': idempotencyKey },
        body,
      });
    const first = await checkout(payment[0], checkoutBody(userId, priceId, productId));
    expect(first.status).toBe(200);
    const sessionsBefore = fleet.stripe.counters.checkoutSessions;

    const retry = await checkout(payment[1], checkoutBody(userId, priceId, productId));
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual(first.json);
    expect(fleet.stripe.counters.checkoutSessions).toBe(sessionsBefore);

    const changed = await checkout(payment[1], {
      ...checkoutBody(userId, priceId, productId),
      email: 'other@example.com',
    });
    expect(changed.status).toBe(409);
  });
});

describeWithServers('one instance of each service goes away during traffic', () => {
  it('drains a gateway instance on SIGTERM: its requests finish, new ones go to the other, none is lost', async () => {
    const { key } = await newApiKey(await signIn());
    fleet.openai.set({
      content: 'slow',
      latencyMs: 1_000,
      usage: { prompt_tokens: 0, completion_tokens: 1, total_tokens: 1 },
    });
    const chat = (id: string) =>
      viaProxy({
        host: GATEWAY_HOST,
        path: '/api/v1/ai/chat/completions',
        headers: { 'x-api-key': key, 'x-request-id': id },
        body: CHAT_SMALL,
      });
    const upstreamCalls = () => fleet.openai.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const before = upstreamCalls();
    const firstWave = Array.from({ length: 6 }, () => randomUUID());
    const first = firstWave.map(chat);
    // All six are with a provider now, i.e. in flight on the instances.
    const deadline = Date.now() + 10_000;
    while (upstreamCalls() < before + 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

    const [leaving, staying] = gateway;
    const exited = leaving.stop();
    // The signal has been handled once the instance refuses new connections.
    await waitUntilRefusing(leaving.port);
    const secondWave = Array.from({ length: 6 }, () => randomUUID());
    const second = secondWave.map(chat);

    const responses = await Promise.all([...first, ...second]);
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    expect(await exited).toBe(0);

    await fleet.waitForLogged([...firstWave, ...secondWave]);
    // The leaving instance had part of the first wave and finished it before it exited.
    expect(fleet.upstreamsOf(firstWave)).toContain(addressOf(leaving));
    // Whatever came after the signal was answered by the other one.
    for (const upstream of fleet.upstreamsOf(secondWave))
      expect(upstream.endsWith(addressOf(staying))).toBe(true);
  });

  it('routes around a crashed payment instance: every checkout sent afterwards is answered, once', async () => {
    const { productId, priceId } = seedPlan();
    const [crashed, surviving] = payment;
    expect(await crashed.kill('SIGKILL')).toBeNull();

    const ids = Array.from({ length: 10 }, () => randomUUID());
    const sessionsBefore = fleet.stripe.counters.checkoutSessions;
    const responses = await Promise.all(
      ids.map((id) =>
        viaProxy({
          host: PAYMENT_HOST,
          path: '/api/v1/checkout/subscription',
          headers: { 'x-api-key': PAYMENT_KEY, 'x-request-id': id, 'idempotency-key': randomUUID() },
          body: checkoutBody(`user_${randomUUID()}`, priceId, productId),
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(ids.map(() => 200));
    expect(fleet.stripe.counters.checkoutSessions).toBe(sessionsBefore + ids.length);

    await fleet.waitForLogged(ids);
    const upstreams = fleet.upstreamsOf(ids);
    // nginx tried the dead instance (connection refused), then handed the request to the live one.
    expect(upstreams).toContain(`${addressOf(crashed)}, ${addressOf(surviving)}`);
    for (const upstream of upstreams) expect(upstream.endsWith(addressOf(surviving))).toBe(true);
  });
});
