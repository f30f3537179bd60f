import { randomUUID } from 'node:crypto';
import {
  arbHeaderValue,
  arbWireBody,
  fuzzRunner,
  listenLoopback,
  sendWireBody,
  signWebhookPayload,
  type WireBody,
} from '@platform/testing';
import fc from 'fast-check';
import request from 'supertest';
import { API_KEY, type Harness, newUserId, startHarness } from './support/harness';
import { USAGE_ENV } from './support/usage';

/**
 * Property-based fuzzing of the usage endpoints (like fuzz.int.test.ts for the
 * others): generated and mutated batches, keys and thin-event bodies. Whatever
 * the input: never a 5xx, never a hang, every error is `{error, request_id}`.
 */
const { timeout, run, expectContract } = fuzzRunner(30);
const EVENT_SECRET = 'whsec_usage_fuzz_secret';

let h: Harness;
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  h = await startHarness();
  h.fake.meters.seed({ event_name: 'ai_tokens' });
  const app = h.buildApp({
    ...USAGE_ENV,
    PAYMENT_RATE_LIMIT_PER_MINUTE: '1000000',
    STRIPE_EVENT_DESTINATION_SECRET: EVENT_SECRET,
  });
  ({ url, close } = await listenLoopback(app));
});
afterAll(async () => {
  await close?.();
  await h?.close();
});

const arbKey = fc.oneof(
  { weight: 6, arbitrary: fc.constant<string | null>(API_KEY) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: arbHeaderValue },
);

function post(path: string, key: string | null, body: WireBody): request.Test {
  let req = request(url).post(path);
  if (key !== null) req = req.set('X-API-Key', key);
  return sendWireBody(req, body);
}

describe('fuzzing the usage endpoints', () => {
  it(
    'POST /api/v1/usage-events',
    async () => {
      const valid = {
        events: [
          { id: randomUUID(), user_id: newUserId(), value: 3, timestamp: new Date().toISOString() },
          {
            id: randomUUID(),
            user_id: newUserId(),
            meter: 'cost',
            value: 1,
            timestamp: new Date().toISOString(),
          },
        ],
      };
      await run(
        fc.asyncProperty(arbKey, arbWireBody(valid), (key, body) =>
          expectContract(post('/api/v1/usage-events', key, body)),
        ),
      );
    },
    timeout,
  );

  it(
    'GET /api/v1/usage-events/error-reports with any query',
    async () => {
      await run(
        fc.asyncProperty(arbKey, fc.string({ maxLength: 30 }), (key, limit) => {
          let req = request(url).get('/api/v1/usage-events/error-reports').query({ limit });
          if (key !== null) req = req.set('X-API-Key', key);
          return expectContract(req);
        }),
      );
    },
    timeout,
  );

  it(
    'POST /webhooks/stripe/events with signed bodies of any shape',
    async () => {
      const { notification } = h.fake.meters.errorReport('ai_tokens', []);
      const thin = JSON.parse(notification) as Record<string, unknown>;
      await run(
        fc.asyncProperty(arbWireBody(thin), fc.boolean(), (body, signed) => {
          const raw =
            body.kind === 'json' ? JSON.stringify(body.value) : body.kind === 'raw' ? body.text : '';
          let req = request(url).post('/webhooks/stripe/events').set('Content-Type', 'application/json');
          if (signed) req = req.set('Stripe-Signature', signWebhookPayload(raw, EVENT_SECRET));
          return expectContract(req.send(raw));
        }),
      );
    },
    timeout,
  );
});
