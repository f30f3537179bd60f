import { startTracing, type Tracing } from '@platform/service-kit';
import { type OtlpReceiver, startOtlpReceiver } from '@platform/testing';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';

/**
 * Issue 43, traces over the default protocol, OTLP/HTTP protobuf: the SDK's
 * exporter with the gateway's own encoder (service-kit otlp-protobuf.ts, whose
 * bytes its unit test compares with the SDK's serializer) posts to
 * `<endpoint>/v1/traces` as `application/x-protobuf`, carrying the request's
 * trace and its spans.
 */
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let h: AiHarness;
let url: string;
let caller: TestCaller;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // No OTEL_EXPORTER_OTLP_PROTOCOL: the default, http/protobuf.
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' };
  Object.assign(process.env, env);
  tracing = startTracing({ service: 'gateway', env });
  h = await startAiHarness({});
  url = (await h.listen()).url;
  caller = await h.createCaller();
});
afterAll(async () => {
  await h?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

it('a request traced with the default protocol arrives as OTLP/protobuf with its spans', async () => {
  h.openai.set({ content: 'fine' });
  const res = await fetch(`${url}/api/v1/ai/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': caller.apiKey,
      traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`,
    },
    body: JSON.stringify({
      lane: 'free',
      project_id: 'proj-proto',
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
  expect(res.status).toBe(200);
  await tracing?.flush();
  const body = () => Buffer.concat(receiver.protobufBodies);
  await receiver.waitFor(() => body().includes('gateway.ledger.append'));
  const all = body();
  expect(receiver.refused).toBe(0);
  expect(receiver.spans).toEqual([]);
  for (const text of [
    'POST /api/v1/ai/chat/completions',
    'chat free-a',
    'gateway.budget.reserve',
    'proj-proto',
  ])
    expect(all.includes(text)).toBe(true);
  // The caller's trace id, as the 16 bytes protobuf carries.
  expect(all.includes(Buffer.from(TRACE_ID, 'hex'))).toBe(true);
});
