import {
  arbHeaderValue,
  arbJson,
  arbPathSegment,
  arbWireBody,
  buildEvent,
  fuzzRunner,
  listenLoopback,
  sendWireBody,
  type WireBody,
} from '@platform/testing';
import fc from 'fast-check';
import request from 'supertest';
import { seedSubscriber, sendWebhook } from './support/endpoints';
import { API_KEY, type Harness, seedCatalog, startHarness, urls } from './support/harness';

/**
 * Property-based fuzzing of every payment endpoint: generated and mutated
 * bodies, API keys, headers and path segments, and signed webhooks of any
 * shape. Whatever the input: never a 5xx (502/503 only when the Stripe fake
 * says Stripe failed, which it does not here), never a hang, and every error
 * carries `{error, request_id}`. Seeded; FUZZ_RUNS and FUZZ_SEED for long runs.
 */
const { timeout, run, expectContract } = fuzzRunner(30);

let h: Harness;
let url: string;
let close: () => Promise<void>;
let valid: {
  subscription: object;
  item: object;
  cart: object;
  portal: object;
  userId: string;
  productId: string;
};
let subscription: { id: string };

beforeAll(async () => {
  h = await startHarness();
  const app = h.buildApp({ PAYMENT_RATE_LIMIT_PER_MINUTE: '1000000' });
  ({ url, close } = await listenLoopback(app));
  const { product, oneTime, userId, ...seeded } = await seedSubscriber(h);
  subscription = seeded.subscription;
  const base = { user_id: userId, email: 'a@example.com', ...urls };
  // The subscriber already has `product`: a checkout for it would be 409 subscription_exists.
  const unsubscribed = seedCatalog(h.fake, 'fresh');
  valid = {
    subscription: { ...base, product_id: unsubscribed.product.id, price_id: unsubscribed.monthly.id },
    item: { ...base, price_id: oneTime.id, quantity: 2 },
    cart: { ...base, items: [{ price_id: oneTime.id, quantity: 1 }] },
    portal: { user_id: userId, return_url: urls.success_url },
    userId,
    productId: product.id,
  };
}, 120_000);
afterAll(async () => {
  await close?.();
  await h?.close();
});

type Input = { key: string | null; body: WireBody; segs: [string, string]; requestId: string | null };

const arbKey = fc.oneof(
  { weight: 6, arbitrary: fc.constant(API_KEY) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: arbHeaderValue },
);

function arbInput(body: Record<string, unknown> | undefined): fc.Arbitrary<Input> {
  return fc.record({
    key: arbKey,
    body: body ? arbWireBody(body) : fc.constant<WireBody>({ kind: 'none' }),
    segs: fc.tuple(arbPathSegment, arbPathSegment),
    requestId: fc.option(arbHeaderValue),
  });
}

/** Long runs (FUZZ_RUNS) would otherwise keep every log line and fake request in memory. */
function forgetRecordings(): void {
  if (h.logs.lines.length > 5000) h.logs.lines.length = 0;
  const requests = h.fake.requests as unknown[];
  if (requests.length > 5000) requests.length = 0;
}

function check(req: request.Test): Promise<void> {
  forgetRecordings();
  return expectContract(req);
}

function api(method: 'get' | 'post', path: string, input: Input): request.Test {
  let req = request(url)[method](path);
  if (input.key !== null) req = req.set('X-API-Key', input.key);
  if (input.requestId !== null) req = req.set('X-Request-Id', input.requestId);
  return sendWireBody(req, input.body);
}

describe('fuzzing every payment endpoint', () => {
  it.each([['/health'], ['/health/ready'], ['/openapi.json'], ['/docs'], ['/metrics']])(
    'GET %s',
    async (path) => {
      await run(fc.asyncProperty(arbInput(undefined), (input) => check(api('get', path, input))));
    },
    timeout,
  );

  it.each([['subscription'], ['item'], ['cart']] as const)(
    'POST /api/v1/checkout/%s',
    async (kind) => {
      await run(
        fc.asyncProperty(arbInput(valid[kind] as Record<string, unknown>), (input) =>
          check(api('post', `/api/v1/checkout/${kind}`, input)),
        ),
      );
    },
    timeout,
  );

  it(
    'POST /api/v1/portal',
    async () => {
      await run(
        fc.asyncProperty(arbInput(valid.portal as Record<string, unknown>), (input) =>
          check(api('post', '/api/v1/portal', input)),
        ),
      );
    },
    timeout,
  );

  it(
    'GET /api/v1/subscriptions/{user_id}/{product_id}',
    async () => {
      const segs = fc.oneof(
        fc.tuple(arbPathSegment, arbPathSegment),
        fc.constant<[string, string]>([valid.userId, valid.productId]),
      );
      await run(
        fc.asyncProperty(fc.tuple(arbInput(undefined), segs), ([input, [user, product]]) =>
          check(api('get', `/api/v1/subscriptions/${user}/${product}`, input)),
        ),
      );
    },
    timeout,
  );

  it(
    'GET and POST /api/v1/{anything}',
    async () => {
      await run(
        fc.asyncProperty(arbInput({}), fc.constantFrom('get' as const, 'post' as const), (input, method) =>
          check(api(method, `/api/v1/${input.segs[0]}/${input.segs[1]}`, input)),
        ),
      );
    },
    timeout,
  );

  it(
    'POST /webhooks/stripe with signed events of any shape, and unsigned or badly signed bodies',
    async () => {
      const event = buildEvent('customer.subscription.updated', subscription) as unknown as Record<
        string,
        unknown
      >;
      const arbEventBody = fc.oneof(
        arbWireBody(event).map((b) =>
          b.kind === 'json' ? JSON.stringify(b.value) : b.kind === 'raw' ? b.text : '',
        ),
        fc
          .tuple(fc.constantFrom('id', 'type', 'created', 'data', 'object'), arbJson)
          .map(([k, v]) => JSON.stringify({ ...event, id: `evt_${Math.random()}`, [k]: v })),
        arbJson.map((v) => JSON.stringify({ ...event, id: `evt_${Math.random()}`, data: { object: v } })),
      );
      const arbSignature = fc.oneof(
        { weight: 6, arbitrary: fc.constant('sign') },
        { weight: 1, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: arbHeaderValue },
      );
      await run(
        fc.asyncProperty(arbEventBody, arbSignature, (raw, signature) => {
          return check(sendWebhook(url, raw, signature === 'sign' ? undefined : signature));
        }),
      );
    },
    timeout,
  );
});
