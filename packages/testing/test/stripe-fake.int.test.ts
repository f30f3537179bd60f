import Stripe from 'stripe';
import { buildEvent, type StripeFake, signWebhookPayload, startStripeFake } from '../src/stripe-fake';

const KEY = 'sk_test_fake_123456';
let fake: StripeFake;
let stripe: Stripe;

beforeEach(async () => {
  fake = await startStripeFake();
  stripe = new Stripe(KEY, fake.sdkConfig());
});
afterEach(() => fake.close());

/** Returns the rejection of `promise`, failing the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await promise;
  } catch (error) {
    return error as Stripe.errors.StripeError;
  }
  throw new Error('expected the Stripe call to fail');
}

function seedCatalog() {
  const product = fake.seedProduct({ id: 'prod_pro', name: 'Pro' });
  const monthly = fake.seedPrice({
    id: 'price_monthly',
    product: product.id,
    unit_amount: 900,
    recurring: { interval: 'month' },
  });
  const book = fake.seedPrice({ id: 'price_book', unit_amount: 1500 });
  return { product, monthly, book };
}

describe('checkout sessions', () => {
  test('subscription session is created with the exact form encoding stripe-node sends', async () => {
    seedCatalog();
    const customer = await stripe.customers.create({ email: 'a@example.com', metadata: { user_id: 'u1' } });
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer: customer.id,
      line_items: [{ price: 'price_monthly', quantity: 1 }],
      success_url: 'https://app.example/ok',
      cancel_url: 'https://app.example/cancel',
      client_reference_id: 'u1',
      metadata: { user_id: 'u1' },
      subscription_data: { metadata: { user_id: 'u1', product_id: 'prod_pro' } },
      allow_promotion_codes: true,
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toBe(`https://checkout.stripe.test/c/pay/${session.id}`);
    expect(session).toMatchObject({
      mode: 'subscription',
      customer: customer.id,
      status: 'open',
      amount_total: 900,
    });
    const sent = fake.requests.at(-1);
    expect(sent?.path).toBe('/v1/checkout/sessions');
    expect(sent?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.headers['stripe-version']).toBe(Stripe.API_VERSION);
    expect(sent?.headers['idempotency-key']).toMatch(/^stripe-node-retry-/);
    expect(sent?.raw).toContain('line_items[0][price]=price_monthly');
    expect(sent?.raw).toContain('subscription_data[metadata][user_id]=u1');
    expect(fake.lineItems(session.id)).toEqual([{ price: 'price_monthly', quantity: 1 }]);
    expect(fake.store.checkoutParams.get(session.id)?.subscription_data).toEqual({
      metadata: { user_id: 'u1', product_id: 'prod_pro' },
    });
  });

  test('a misspelt parameter is refused like Stripe, naming the param', async () => {
    seedCatalog();
    const error = await rejection(
      stripe.checkout.sessions.create({
        mode: 'payment',
        line_item: [{ price: 'price_book', quantity: 1 }],
        success_url: 'https://app.example/ok',
      } as unknown as Stripe.Checkout.SessionCreateParams),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.statusCode).toBe(400);
    expect(error.param).toBe('line_item');
    expect(error.message).toBe('Received unknown parameter: line_item. Did you mean line_items?');
  });

  test.each([
    [
      'unknown mode',
      { mode: 'pay', line_items: [{ price: 'price_book', quantity: 1 }] },
      'mode',
      'Invalid mode: must be one of payment, setup, or subscription',
    ],
    [
      'missing mode',
      { line_items: [{ price: 'price_book', quantity: 1 }] },
      'mode',
      'Missing required param: mode.',
    ],
    [
      'unknown price',
      { mode: 'payment', line_items: [{ price: 'price_nope', quantity: 1 }] },
      'line_items[0][price]',
      "No such price: 'price_nope'",
    ],
    [
      'zero quantity',
      { mode: 'payment', line_items: [{ price: 'price_book', quantity: 0 }] },
      'line_items[0][quantity]',
      'This value must be greater than or equal to 1.',
    ],
    [
      'recurring price in payment mode',
      { mode: 'payment', line_items: [{ price: 'price_monthly', quantity: 1 }] },
      'line_items[0][price]',
      'You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.',
    ],
    [
      'subscription mode without a recurring price',
      { mode: 'subscription', line_items: [{ price: 'price_book', quantity: 1 }] },
      'line_items',
      'You must provide at least one recurring price in `subscription` mode when using prices.',
    ],
    [
      'unknown customer',
      { mode: 'payment', customer: 'cus_missing', line_items: [{ price: 'price_book', quantity: 1 }] },
      'customer',
      "No such customer: 'cus_missing'",
    ],
    [
      'subscription_data in payment mode',
      {
        mode: 'payment',
        line_items: [{ price: 'price_book', quantity: 1 }],
        subscription_data: { metadata: { a: 'b' } },
      },
      'subscription_data',
      'You can not pass `subscription_data` in `payment` mode.',
    ],
  ])('%s is refused with a 400', async (_name, params, param, message) => {
    seedCatalog();
    const error = await rejection(
      stripe.checkout.sessions.create({
        success_url: 'https://app.example/ok',
        ...params,
      } as Stripe.Checkout.SessionCreateParams),
    );
    expect(error.type).toBe('StripeInvalidRequestError');
    expect({ param: error.param, message: error.message }).toEqual({ param, message });
  });

  test('success_url is required for hosted sessions but not for embedded ones', async () => {
    seedCatalog();
    const missing = await rejection(
      stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: [{ price: 'price_book', quantity: 1 }],
      }),
    );
    expect(missing.code).toBe('parameter_missing');
    expect(missing.param).toBe('success_url');
    const embedded = await stripe.checkout.sessions.create({
      mode: 'payment',
      ui_mode: 'embedded_page',
      return_url: 'https://app.example/return',
      line_items: [{ price: 'price_book', quantity: 2 }],
    });
    expect(embedded.url).toBeNull();
    expect(embedded.client_secret).toMatch(/_secret_/);
    expect(embedded.amount_total).toBe(3000);
  });

  test('line item limits: 100 in payment mode, 20 recurring in subscription mode', async () => {
    seedCatalog();
    const book = { price: 'price_book', quantity: 1 };
    await expect(
      stripe.checkout.sessions.create({
        mode: 'payment',
        success_url: 'https://app.example/ok',
        line_items: Array(100).fill(book),
      }),
    ).resolves.toMatchObject({ amount_total: 150000 });
    const tooMany = await rejection(
      stripe.checkout.sessions.create({
        mode: 'payment',
        success_url: 'https://app.example/ok',
        line_items: Array(101).fill(book),
      }),
    );
    expect(tooMany.param).toBe('line_items');
    const recurring = Array.from({ length: 21 }, () => {
      const price = fake.seedPrice({ recurring: { interval: 'month' } });
      return { price: price.id, quantity: 1 };
    });
    const tooManyRecurring = await rejection(
      stripe.checkout.sessions.create({
        mode: 'subscription',
        success_url: 'https://app.example/ok',
        line_items: recurring,
      }),
    );
    expect(tooManyRecurring.message).toContain('up to 20 recurring');
  });

  test('completing a subscription session creates the subscription with subscription_data metadata', async () => {
    seedCatalog();
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer_email: 'b@example.com',
      line_items: [{ price: 'price_monthly', quantity: 1 }],
      success_url: 'https://app.example/ok',
      subscription_data: { metadata: { user_id: 'u2' } },
    });
    const done = fake.completeCheckoutSession(session.id);
    expect(done.status).toBe('complete');
    const subscription = await stripe.subscriptions.retrieve(done.subscription as string);
    expect(subscription.metadata).toEqual({ user_id: 'u2' });
    expect(subscription.customer).toBe(done.customer);
    expect(subscription.items.data[0]?.price.id).toBe('price_monthly');
  });
});

describe('idempotency', () => {
  test('same key and params replay the same customer; different params are an idempotency_error', async () => {
    const params = { email: 'c@example.com', metadata: { user_id: 'u3' } };
    const first = await stripe.customers.create(params, { idempotencyKey: 'customer-u3' });
    const second = await stripe.customers.create(params, { idempotencyKey: 'customer-u3' });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(fake.counters.customers).toBe(1);
    const error = await rejection(
      stripe.customers.create({ email: 'other@example.com' }, { idempotencyKey: 'customer-u3' }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error.message).toContain("Try using a key other than 'customer-u3'");
  });

  test('a checkout session replays byte-identically under the same key', async () => {
    seedCatalog();
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: 'payment',
      line_items: [{ price: 'price_book', quantity: 1 }],
      success_url: 'https://app.example/ok',
    };
    const a = await stripe.checkout.sessions.create(params, { idempotencyKey: 'cs-1' });
    const b = await stripe.checkout.sessions.create(params, { idempotencyKey: 'cs-1' });
    expect(b.id).toBe(a.id);
    expect(fake.counters.checkoutSessions).toBe(1);
  });
});

describe('customers', () => {
  test('list by email, search by metadata, update merges metadata', async () => {
    const c = await stripe.customers.create({
      email: 'd@example.com',
      metadata: { user_id: 'u4', plan: 'x' },
    });
    await stripe.customers.create({ email: 'e@example.com', metadata: { user_id: 'u5' } });
    const byEmail = await stripe.customers.list({ email: 'd@example.com' });
    expect(byEmail.data.map((x) => x.id)).toEqual([c.id]);
    const found = await stripe.customers.search({ query: "metadata['user_id']:'u4'" });
    expect(found.data.map((x) => x.id)).toEqual([c.id]);
    const updated = await stripe.customers.update(c.id, { metadata: { plan: '', tier: 'gold' } });
    expect(updated.metadata).toEqual({ user_id: 'u4', tier: 'gold' });
    const retrieved = await stripe.customers.retrieve(c.id);
    expect((retrieved as Stripe.Customer).email).toBe('d@example.com');
  });

  test('search lags behind writes when searchIndexDelayMs is set, like Stripe', async () => {
    const lagging = await startStripeFake({ searchIndexDelayMs: 60_000 });
    try {
      const client = new Stripe(KEY, lagging.sdkConfig());
      await client.customers.create({ metadata: { user_id: 'u6' } });
      const result = await client.customers.search({ query: 'metadata["user_id"]:"u6"' });
      expect(result.data).toEqual([]);
    } finally {
      await lagging.close();
    }
  });

  test('a malformed email is refused with email_invalid', async () => {
    const error = await rejection(stripe.customers.create({ email: 'not-an-email' }));
    expect({ code: error.code, param: error.param }).toEqual({ code: 'email_invalid', param: 'email' });
    expect(fake.counters.customers).toBe(0);
  });

  test('an unsupported search field fails like Stripe', async () => {
    const error = await rejection(stripe.customers.search({ query: "user_id:'u1'" }));
    expect(error.param).toBe('query');
    expect(error.message).toContain("Field 'user_id' is an unsupported search field");
  });
});

describe('catalog', () => {
  test('prices are created one-time or recurring; unknown price is a 404 resource_missing', async () => {
    const product = await stripe.products.create({ name: 'Credits' });
    const once = await stripe.prices.create({ product: product.id, currency: 'eur', unit_amount: 500 });
    const yearly = await stripe.prices.create({
      product: product.id,
      currency: 'eur',
      unit_amount: 5000,
      recurring: { interval: 'year' },
    });
    expect(once).toMatchObject({ type: 'one_time', recurring: null, product: product.id });
    expect(yearly).toMatchObject({ type: 'recurring', recurring: { interval: 'year', interval_count: 1 } });
    expect((await stripe.prices.retrieve(yearly.id)).id).toBe(yearly.id);
    const error = await rejection(stripe.prices.retrieve('price_x'));
    expect(error.statusCode).toBe(404);
    expect(error.code).toBe('resource_missing');
    expect(error.message).toBe("No such price: 'price_x'");
    const badInterval = await rejection(
      stripe.prices.create({
        product: product.id,
        currency: 'eur',
        unit_amount: 1,
        recurring: { interval: 'monthly' as 'month' },
      }),
    );
    expect(badInterval.param).toBe('recurring[interval]');
  });
});

describe('subscriptions', () => {
  test('list filters by customer, price and status and auto-paginates', async () => {
    const { monthly, book } = seedCatalog();
    const customer = fake.seedCustomer({ email: 'f@example.com' });
    for (let i = 0; i < 25; i++) {
      fake.seedSubscription({
        customer: customer.id,
        items: [{ price: monthly.id }],
        created: 1_700_000_000 + i,
      });
    }
    const canceled = fake.seedSubscription({
      customer: customer.id,
      items: [{ price: monthly.id }],
      status: 'canceled',
    });
    const all = await stripe.subscriptions
      .list({ customer: customer.id, status: 'all', limit: 10 })
      .autoPagingToArray({ limit: 100 });
    expect(all).toHaveLength(26);
    expect(fake.requests.filter((r) => r.path === '/v1/subscriptions')).toHaveLength(3);
    const active = await stripe.subscriptions.list({ customer: customer.id, limit: 100 });
    expect(active.data.map((s) => s.id)).not.toContain(canceled.id);
    const byOtherPrice = await stripe.subscriptions.list({ customer: customer.id, price: book.id });
    expect(byOtherPrice.data).toEqual([]);
    fake.updateSubscription(canceled.id, { status: 'active' });
    const first = await stripe.subscriptions.list({ customer: customer.id, limit: 1 });
    expect(first.has_more).toBe(true);
    expect(first.data[0]?.id).toBe(canceled.id);
  });

  test('retrieve returns the period end on items and expands customer and product', async () => {
    const { monthly } = seedCatalog();
    const customer = fake.seedCustomer({ email: 'g@example.com' });
    const seeded = fake.seedSubscription({
      customer: customer.id,
      items: [{ price: monthly.id, current_period_end: 1_900_000_000 }],
      status: 'trialing',
    });
    const sub = await stripe.subscriptions.retrieve(seeded.id, {
      expand: ['customer', 'items.data.price.product'],
    });
    expect(sub.status).toBe('trialing');
    expect(sub.items.data[0]?.current_period_end).toBe(1_900_000_000);
    expect((sub.customer as Stripe.Customer).email).toBe('g@example.com');
    expect((sub.items.data[0]!.price.product as Stripe.Product).name).toBe('Pro');
    expect(fake.requests.at(-1)?.raw).toContain('expand[0]=customer');
    const error = await rejection(stripe.subscriptions.retrieve(seeded.id, { expand: ['plan_thing'] }));
    expect(error.message).toBe('This property cannot be expanded (plan_thing).');
  });

  test('legacy shape keeps current_period_end on the subscription', async () => {
    const { monthly } = seedCatalog();
    const customer = fake.seedCustomer();
    const seeded = fake.seedSubscription({
      customer: customer.id,
      items: [{ price: monthly.id, current_period_end: 1_800_000_000 }],
      legacyPeriodFields: true,
    });
    const response = await fetch(`${fake.url}/v1/subscriptions/${seeded.id}?expand[]=customer`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const body = (await response.json()) as { current_period_end: number; customer: { id: string } };
    expect(body.current_period_end).toBe(1_800_000_000);
    expect(body.customer.id).toBe(customer.id);
  });
});

describe('billing portal', () => {
  test('creates a session for an existing customer and refuses unknown ones', async () => {
    const customer = fake.seedCustomer();
    const session = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: 'https://app.example/account',
    });
    expect(session.id).toMatch(/^bps_/);
    expect(session.url).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\//);
    const error = await rejection(stripe.billingPortal.sessions.create({ customer: 'cus_nope' }));
    expect(error.message).toBe("No such customer: 'cus_nope'");
    expect(error.param).toBe('customer');
  });

  test('fails like an account without saved portal settings when portalConfigured is false', async () => {
    const unconfigured = await startStripeFake({ portalConfigured: false });
    try {
      const client = new Stripe(KEY, unconfigured.sdkConfig());
      const customer = unconfigured.seedCustomer();
      const error = await rejection(client.billingPortal.sessions.create({ customer: customer.id }));
      expect(error.message).toContain("You can't create a portal session in test mode");
    } finally {
      await unconfigured.close();
    }
  });
});

describe('auth, faults and hangs', () => {
  test('missing or live keys get 401', async () => {
    const noKey = await fetch(`${fake.url}/v1/customers`);
    expect(noKey.status).toBe(401);
    const live = new Stripe('sk_live_abcdef123456', fake.sdkConfig());
    const error = await rejection(live.customers.list());
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(error.message).toBe('Invalid API Key provided: sk_live_****3456');
  });

  test('scripted faults map to the SDK error classes and are consumed', async () => {
    fake.fault({ path: /^\/v1\/customers$/, type: 'api_error', message: 'boom' });
    fake.fault({ type: 'rate_limit_error', code: 'rate_limit' });
    fake.fault({ type: 'card_error', code: 'card_declined', declineCode: 'insufficient_funds' });
    const api = await rejection(stripe.customers.create({}));
    expect(api).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(api.message).toBe('boom');
    expect(await rejection(stripe.customers.list())).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    const card = await rejection(stripe.customers.list());
    expect(card).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(card.decline_code).toBe('insufficient_funds');
    await expect(stripe.customers.list()).resolves.toMatchObject({ object: 'list' });
  });

  test('a hang makes the SDK time out', async () => {
    fake.hang({ path: /checkout/ });
    seedCatalog();
    const impatient = new Stripe(KEY, { ...fake.sdkConfig(), timeout: 200 });
    const error = await rejection(
      impatient.checkout.sessions.create({
        mode: 'payment',
        success_url: 'https://app.example/ok',
        line_items: [{ price: 'price_book', quantity: 1 }],
      }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(fake.counters.checkoutSessions).toBe(0);
  });
});

describe('webhooks', () => {
  test('signed events verify with stripe.webhooks.constructEvent and fail with the wrong secret', () => {
    const event = buildEvent(
      'customer.subscription.updated',
      { id: 'sub_1', object: 'subscription' },
      { id: 'evt_1' },
    );
    const payload = JSON.stringify(event);
    const header = signWebhookPayload(payload, 'whsec_test');
    const verified = stripe.webhooks.constructEvent(payload, header, 'whsec_test');
    expect(verified.id).toBe('evt_1');
    expect(verified.type).toBe('customer.subscription.updated');
    expect(() => stripe.webhooks.constructEvent(payload, header, 'whsec_other')).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const stale = signWebhookPayload(payload, 'whsec_test', Math.floor(Date.now() / 1000) - 3600);
    expect(() => stripe.webhooks.constructEvent(payload, stale, 'whsec_test')).toThrow(/Timestamp outside/);
  });
});

describe('what a customer paid for: events, line items, charges, entitlements', () => {
  async function paidCart() {
    const { book } = seedCatalog();
    const customer = await stripe.customers.create({ email: 'a@example.com' });
    const session = await stripe.checkout.sessions.create({
      mode: 'payment',
      customer: customer.id,
      line_items: [{ price: book.id, quantity: 2 }],
      success_url: 'https://app.example.com/ok',
    });
    return { customer, book, session: fake.completeCheckoutSession(session.id) };
  }

  test('events list filters on delivery_success, types and created, newest first, with auto-pagination', async () => {
    const sub = fake.logEvent('customer.subscription.updated', { id: 'sub_1' });
    const lost = fake.logEvent('charge.refunded', { id: 'ch_1' }, { delivered: false });
    const lost2 = fake.logEvent('customer.deleted', { id: 'cus_1' }, { delivered: false });
    const undelivered = await stripe.events
      .list({ delivery_success: false })
      .autoPagingToArray({ limit: 10 });
    expect(undelivered.map((e) => e.id)).toEqual([lost2.id, lost.id]);
    const typed = await stripe.events.list({ delivery_success: false, types: ['charge.refunded'] });
    expect(typed.data.map((e) => e.id)).toEqual([lost.id]);
    const all = await stripe.events
      .list({ created: { gte: sub.created }, limit: 1 })
      .autoPagingToArray({ limit: 10 });
    expect(all).toHaveLength(3);
    const both = await rejection(stripe.events.list({ type: 'x', types: ['y'] }));
    expect(both.type).toBe('StripeInvalidRequestError');
    const unknown = await rejection(stripe.events.list({ delivery_succes: false } as never));
    expect(unknown.message).toMatch(/Received unknown parameter: delivery_succes/);
  });

  test('a paid payment-mode session has a payment intent, line items, and can be refunded and disputed', async () => {
    const { session, book, customer } = await paidCart();
    expect(session).toMatchObject({
      status: 'complete',
      payment_status: 'paid',
      payment_intent: expect.stringMatching(/^pi_/),
    });
    const items = await stripe.checkout.sessions.listLineItems(session.id);
    expect(items.data).toEqual([
      expect.objectContaining({
        object: 'item',
        quantity: 2,
        amount_total: 3000,
        price: expect.objectContaining({ id: book.id }),
      }),
    ]);
    const found = await stripe.checkout.sessions.list({ payment_intent: session.payment_intent!, limit: 1 });
    expect(found.data.map((s) => s.id)).toEqual([session.id]);
    const complete = await stripe.checkout.sessions.list({ customer: customer.id, status: 'complete' });
    expect(complete.data).toHaveLength(1);
    expect(fake.refund(session.id, 1000)).toMatchObject({ amount_refunded: 1000, refunded: false });
    expect(fake.refund(session.id)).toMatchObject({ amount_refunded: 3000, refunded: true });
    expect(fake.dispute(session.id)).toMatchObject({
      status: 'needs_response',
      payment_intent: session.payment_intent,
    });
    expect(fake.dispute(session.id, 'won').status).toBe('won');
  });

  test('an async payment stays unpaid until settled', async () => {
    const { book } = seedCatalog();
    const created = await stripe.checkout.sessions.create({
      mode: 'payment',
      line_items: [{ price: book.id, quantity: 1 }],
      success_url: 'https://app.example.com/ok',
    });
    expect(fake.completeCheckoutSession(created.id, { async: true }).payment_status).toBe('unpaid');
    expect(fake.settleAsyncPayment(created.id, true).payment_status).toBe('paid');
  });

  test('active entitlements are listed per customer; the customer is required', async () => {
    const customer = await stripe.customers.create({ email: 'a@example.com' });
    const summary = fake.setEntitlements(customer.id, ['pro', 'basic']);
    expect(summary).toMatchObject({
      object: 'entitlements.active_entitlement_summary',
      customer: customer.id,
    });
    const list = await stripe.entitlements.activeEntitlements.list({ customer: customer.id });
    expect(list.data.map((e) => e.lookup_key)).toEqual(['pro', 'basic']);
    const missing = await rejection(stripe.entitlements.activeEntitlements.list({} as never));
    expect(missing.message).toBe('Missing required param: customer.');
  });

  test('deleteCustomer ends its subscriptions and later calls get No such customer', async () => {
    const { monthly } = seedCatalog();
    const customer = await stripe.customers.create({ email: 'a@example.com' });
    const sub = fake.seedSubscription({ customer: customer.id, items: [{ price: monthly.id }] });
    fake.deleteCustomer(customer.id);
    expect(fake.store.subscriptions.get(sub.id)?.status).toBe('canceled');
    expect(await stripe.customers.retrieve(customer.id)).toMatchObject({ deleted: true });
    const error = await rejection(stripe.customers.update(customer.id, { email: 'b@example.com' }));
    expect(error).toMatchObject({ code: 'resource_missing', message: `No such customer: '${customer.id}'` });
  });
});
