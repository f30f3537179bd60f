import { randomBytes, randomUUID } from 'node:crypto';
import { openDatabase } from '@platform/db';
import { TEST_LANES, writeTempJson } from '@platform/gateway/testing';
import {
  buildEvent,
  describeWithSharedServers,
  freePort,
  type SharedServers,
  signWebhookPayload,
  startSharedServers,
} from '@platform/testing';
import {
  closeFakes,
  type Fakes,
  gatewayFakeEnv,
  paymentFakeEnv,
  seedTokenMeter,
  startFakes,
} from './support/fakes';
import {
  createServiceStorage,
  expectStatus,
  type ServiceProcess,
  type ServiceStorage,
  startService,
} from './support/services';
import { until } from './support/until';

// Issue 42, item 5 (billing follows ownership), end to end: payment and the gateway as real
// processes with the Stripe, OpenAI and SMTP fakes. A person signs in by the mailed link,
// creates a team and a team key; the team's billing user subscribes through payment's
// checkout as the person does. Chat usage of the team key reaches the team's own Stripe
// customer as meter events whose identifier is the gateway's record id (the answer's
// x-request-id); the person's own key reaches the person's customer; nothing crosses over.

const describeWithServers = describeWithSharedServers(
  'the team billing test (e2e/test/billing-teams.int.test.ts)',
);
let servers: SharedServers | undefined;

const PAYMENT_KEY = `e2e-team-billing-${randomBytes(8).toString('hex')}`;
const METER_EVENT = 'ai_tokens';
const TOKENS_PRODUCT = `prod_tokens_${randomBytes(4).toString('hex')}`;
const TOKENS_PRICE = `price_tokens_${randomBytes(4).toString('hex')}`;
const PUBLIC_URL = 'https://gateway.example.com';
const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;

let fakes: Fakes;
let paymentStorage: ServiceStorage;
let gatewayStorage: ServiceStorage;
let payment: ServiceProcess | undefined;
let gateway: ServiceProcess | undefined;
let paymentPort: number;

describeWithServers('team usage billed to the team through payment and Stripe', () => {
  beforeAll(async () => {
    servers = await startSharedServers();
    fakes = await startFakes();
    seedTokenMeter(fakes, { event: METER_EVENT, product: TOKENS_PRODUCT, price: TOKENS_PRICE });
    fakes.openai.set({ content: 'four words of answer', usage: { prompt_tokens: 7, completion_tokens: 5 } });
    [paymentStorage, gatewayStorage] = await Promise.all([
      createServiceStorage('payment', servers.databaseUrl),
      createServiceStorage('gateway', servers.databaseUrl),
    ]);
    paymentPort = await freePort();
    const common = { NODE_ENV: 'production', LOG_LEVEL: 'info', REDIS_URL: servers.redisUrl };
    const paymentEnv = {
      ...common,
      ...paymentStorage.env,
      ...paymentFakeEnv(fakes),
      PAYMENT_MS_API_KEY: PAYMENT_KEY,
      STRIPE_SECRET_KEY: 'sk_test_e2e_team_billing',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      PAYMENT_USAGE_METERS: `tokens=${METER_EVENT}`,
      PAYMENT_USAGE_SENDER_IDLE_MS: '100',
    };
    const gatewayEnv = {
      REDIS_KEY_PREFIX: `gateway-team-billing-${randomBytes(4).toString('hex')}:`,
      ...common,
      ...gatewayStorage.env,
      ...gatewayFakeEnv(fakes, PUBLIC_URL),
      SMTP_URL: `${fakes.smtp.url}?ignoreTLS=true`,
      // Media stays off the token meter (the gateway refuses to start otherwise); only chat is used here.
      AI_LANES_CONFIG: writeTempJson('lanes.json', {
        ...TEST_LANES,
        media_billing: { quantity: 'total_tokens' },
      }),
      PAYMENT_URL: `http://127.0.0.1:${paymentPort}`,
      PAYMENT_API_KEY: PAYMENT_KEY,
      BILLING_IDLE_MS: '100',
    };
    [payment, gateway] = await Promise.all([
      startService('payment', paymentEnv, { port: paymentPort }),
      startService('gateway', gatewayEnv),
    ]);
  }, 200_000);

  afterAll(async () => {
    await Promise.all([payment?.stop(), gateway?.stop()]);
    await Promise.all([paymentStorage?.drop(), gatewayStorage?.drop()]);
    await closeFakes(fakes);
    await servers?.close();
  }, 60_000);

  const gw = (path: string) => `http://127.0.0.1:${gateway?.port}${path}`;

  /** A session write as the console makes it: the cookie and the gateway's own Origin. */
  async function asPerson(cookie: string, method: string, path: string, body?: unknown) {
    const res = await fetch(gw(path), {
      method,
      headers: { cookie, origin: PUBLIC_URL, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** Signs `email` in by the mailed link; the session cookie. */
  async function signIn(email: string): Promise<string> {
    const asked = await fetch(gw('/api/v1/auth/request-magic-link'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: PUBLIC_URL },
      body: JSON.stringify({ email }),
    });
    expect(asked.status).toBe(202);
    const mail = await fakes.smtp.waitForMessage((m) => m.to.includes(email), 10_000);
    const link = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] as string);
    const verified = await fetch(gw('/api/v1/auth/verify-code'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: PUBLIC_URL },
      body: JSON.stringify({ code: link.searchParams.get('code') }),
    });
    expect(verified.status).toBe(200);
    const cookie = verified.headers.getSetCookie().find((c) => c.startsWith('gw_session='));
    return (cookie as string).split(';')[0] as string;
  }

  /** Subscribes a user id to the metered price through payment's checkout and Stripe's webhook. */
  async function subscribe(userId: string, email: string): Promise<void> {
    const checkout = await fetch(`http://127.0.0.1:${paymentPort}/api/v1/checkout/subscription`, {
      method: 'POST',
      headers: { 'x-api-key': PAYMENT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: userId,
        email,
        product_id: TOKENS_PRODUCT,
        price_id: TOKENS_PRICE,
        success_url: 'https://app.example.com/done',
        cancel_url: 'https://app.example.com/cancel',
      }),
    });
    expect(checkout.status).toBe(200);
    const { checkout_session_id: id } = (await checkout.json()) as { checkout_session_id: string };
    // Payment learns the subscription (the item the meter events land on) from Stripe's webhook.
    const payload = JSON.stringify(
      buildEvent('checkout.session.completed', fakes.stripe.completeCheckoutSession(id)),
    );
    const hook = await fetch(`http://127.0.0.1:${paymentPort}/webhooks/stripe`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': signWebhookPayload(payload, WEBHOOK_SECRET),
      },
      body: payload,
    });
    expect(hook.status).toBe(200);
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

  /** One chat completion with `key`; the gateway's record id (its x-request-id when the client sent none). */
  async function chat(key: string, model: string): Promise<string> {
    const res = await fetch(gw('/v1/chat/completions'), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi.' }] }),
    });
    await expectStatus(res, 200, gateway);
    await res.arrayBuffer();
    return res.headers.get('x-request-id') as string;
  }

  it("bills a team key's usage to the team's customer and a personal key's to the person's", async () => {
    const email = `team-owner-${randomUUID()}@example.com`;
    const cookie = await signIn(email);
    const session = await asPerson(cookie, 'GET', '/api/v1/auth/session');
    const personId = session.body.user_id as string;

    const team = await asPerson(cookie, 'POST', '/api/v1/teams', { name: 'Billing team' });
    expect(team.status).toBe(201);
    const teamUserId = team.body.billing_user_id as string;
    expect(teamUserId).not.toBe(personId);

    const teamKey = await asPerson(cookie, 'POST', `/api/v1/teams/${team.body.team_id}/api-keys`, {
      name: 'teamci',
      rules: { lanes: ['standard'], models: ['openai/std-1'] },
    });
    expect(teamKey.status).toBe(201);
    const ownKey = await asPerson(cookie, 'POST', '/api/v1/auth/api-keys', { name: 'mine' });
    expect(ownKey.status).toBe(201);

    // Both subscribe as a product would: the team under its billing user id, the owner under theirs.
    await subscribe(teamUserId, email);
    await subscribe(personId, email);
    const teamCustomer = await until('the team customer', () => customerOf(teamUserId), 30_000);
    const personCustomer = await until('the person customer', () => customerOf(personId), 30_000);
    expect(teamCustomer).not.toBe(personCustomer);

    const teamIds = [await chat(teamKey.body.key, 'standard'), await chat(teamKey.body.key, 'standard')];
    const ownIds = [await chat(ownKey.body.key, 'standard')];

    // Each record reaches Stripe once, as its own meter event on the owner's customer.
    const eventsOf = (customer: string) =>
      fakes.stripe.meters
        .events()
        .filter((e) => e.payload.stripe_customer_id === customer)
        .map((e) => e.identifier)
        .sort();
    await until(
      'every record at Stripe',
      async () => (eventsOf(teamCustomer).length + eventsOf(personCustomer).length >= 3 ? true : undefined),
      60_000,
    );
    expect(eventsOf(teamCustomer)).toEqual([...teamIds].sort());
    expect(eventsOf(personCustomer)).toEqual(ownIds);
    expect(fakes.stripe.meters.total(METER_EVENT, teamCustomer)).toBe(24);
    expect(fakes.stripe.meters.total(METER_EVENT, personCustomer)).toBe(12);
    // One customer per team: its metadata names the team's billing user, not a person.
    expect(fakes.stripe.store.customers.get(teamCustomer)?.metadata).toMatchObject({ user_id: teamUserId });
  }, 180_000);
});
