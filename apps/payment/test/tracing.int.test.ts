import { startTracing, type Tracing } from '@platform/service-kit';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@platform/testing';
import request from 'supertest';
import { stripePathTemplate } from '../src/observability/stripe-spans';
import { API_KEY, newUserId, startHarness } from './support/harness';

/**
 * Issue 43, traces in payment: a SERVER span per request (continuing the
 * caller's `traceparent`) with one CLIENT child per Stripe HTTP call, exported
 * by the real SDK over OTLP/HTTP (JSON) to a receiver in this test.
 */
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let h: Awaited<ReturnType<typeof startHarness>>;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  Object.assign(process.env, env);
  // Before the harness builds its Stripe client: the client adds its spans only while tracing is on.
  tracing = startTracing({ service: 'payment', env });
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

it('a portal request is one span, each Stripe call a child naming the path without ids', async () => {
  const userId = newUserId();
  const customer = h.fake.seedCustomer({ email: 'a@example.com', metadata: { user_id: userId } });
  await h.prisma.customer.create({ data: { userId, stripeCustomerId: customer.id, email: 'a@example.com' } });
  const res = await request(h.app)
    .post('/api/v1/portal')
    .set('X-API-Key', API_KEY)
    .set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN}-01`)
    .send({ user_id: userId, return_url: 'https://app.example.com/account' });
  expect(res.status).toBe(200);
  await tracing?.flush();
  const spans = await receiver.waitFor((all) => all.some((s) => s.traceId === TRACE_ID && s.kind === 2));
  const mine = spans.filter((s) => s.traceId === TRACE_ID);
  const server = mine.find((s) => s.kind === 2) as ReceivedSpan;
  expect(server).toMatchObject({
    parentSpanId: CALLER_SPAN,
    name: 'POST /api/v1/portal',
    service: 'payment',
  });
  expect(server.attributes['http.response.status_code']).toBe(200);
  const stripe = mine.filter((s) => s.kind === 3);
  expect(stripe.map((s) => s.name)).toContain('stripe POST /v1/billing_portal/sessions');
  for (const span of stripe) {
    expect(span.parentSpanId).toBe(server.spanId);
    expect(span.attributes['http.response.status_code']).toBe(200);
  }
  expect(JSON.stringify(mine, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(customer.id);
});

it('path templates hide Stripe object ids', () => {
  expect(stripePathTemplate('/v1/customers/cus_Ab12/balance_transactions')).toBe(
    '/v1/customers/{id}/balance_transactions',
  );
  expect(stripePathTemplate('/v1/billing_portal/sessions')).toBe('/v1/billing_portal/sessions');
});
