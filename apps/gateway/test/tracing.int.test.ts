import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { Tracing } from '@platform/service-kit';
import { FAULTS, type OtlpReceiver, type ReceivedSpan } from '@platform/testing';
import type { AiHarness, TestCaller } from './support/ai-harness';
import { parseSse } from './support/sse';
import { startTracedHarness, stopTracedHarness } from './support/tracing';

/**
 * Issue 43, traces: the gateway's real OpenTelemetry SDK, started from the
 * standard OTEL_* variables, exports over OTLP/HTTP (JSON) to a receiver in
 * this test. One SERVER span per request continues the caller's
 * `traceparent`; each upstream attempt is a CLIENT child with the GenAI
 * attributes and its outcome, and carries the trace on to the provider.
 */
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const PROMPT = 'the tracing canary prompt 7f3a';
const ANSWER_PARTS = ['canary ', 'answer 9c1e'];

let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let h: AiHarness;
let url: string;
let caller: TestCaller;

beforeAll(async () => {
  ({ receiver, tracing, h, url } = await startTracedHarness());
});
afterAll(() => stopTracedHarness({ receiver, tracing, h }));
beforeEach(async () => {
  h.resetFakes();
  receiver.clear();
  caller = await h.createCaller();
});

function stream(headers: Record<string, string> = {}) {
  return fetch(`${url}/api/v1/ai/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey, ...headers },
    body: JSON.stringify({
      lane: 'free',
      project_id: 'proj-trace',
      messages: [{ role: 'user', content: PROMPT }],
    }),
  });
}

/** The spans of the request whose SERVER span is in `traceId`, once they have all arrived. */
async function spansOf(traceId: string | undefined, count: number): Promise<ReceivedSpan[]> {
  await tracing?.flush();
  const pick = (all: ReceivedSpan[]) =>
    all.filter((s) => (traceId ? s.traceId === traceId : true) && s.service === 'gateway');
  return pick(await receiver.waitFor((all) => pick(all).length >= count));
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('OpenTelemetry traces of an AI request', () => {
  it('a stream that fails over once: a request span, one child per attempt with its status, the trace carried on', async () => {
    h.openai.setFor('free-a', FAULTS.rateLimitedNoHint);
    h.openai.setFor('free-b', { chunks: ANSWER_PARTS, usage: { prompt_tokens: 7, completion_tokens: 3 } });
    const res = await stream({ traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    expect(res.status).toBe(200);
    const { events } = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(['chunk', 'chunk', 'done']);

    // request span, two attempts, the reservation and the ledger append
    const spans = await spansOf(TRACE_ID, 5);
    const server = spans.filter((s) => s.kind === SERVER);
    expect(server).toHaveLength(1);
    const request = server[0] as ReceivedSpan;
    // The caller's trace goes on: same trace id, the caller's span is the parent.
    expect(request).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
      name: 'POST /api/v1/ai/chat/stream',
    });
    expect(request.attributes).toMatchObject({
      'http.response.status_code': 200,
      'gateway.key_id': caller.apiKeyId,
      'gateway.project': 'proj-trace',
      'gateway.lane': 'free',
      'gateway.status': 200,
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'cerebras',
      [ATTR_GEN_AI_RESPONSE_MODEL]: 'free-b',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 7,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 3,
      // 7 prompt tokens at 1 micro, 3 answer tokens at 2 (TEST_LANES prices)
      'gateway.cost_micros': 13,
    });

    const attempts = spans
      .filter((s) => s.kind === CLIENT)
      .sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
    expect(attempts.map((s) => s.name)).toEqual(['chat free-a', 'chat free-b']);
    for (const attempt of attempts) expect(attempt.parentSpanId).toBe(request.spanId);
    const [failed, answered] = attempts as [ReceivedSpan, ReceivedSpan];
    expect(failed.attributes).toMatchObject({
      [ATTR_GEN_AI_PROVIDER_NAME]: 'groq',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'free-a',
      'gateway.target': 'groq/free-a',
      'gateway.target.position': 1,
      'gateway.attempt.outcome': 'rate_limited',
      'http.response.status_code': 429,
      'error.type': 'rate_limited',
      'gateway.breaker.state': 'closed',
    });
    expect(failed.statusCode).toBe(ERROR);
    expect(answered.attributes).toMatchObject({
      [ATTR_GEN_AI_REQUEST_MODEL]: 'free-b',
      'gateway.target.position': 2,
      'gateway.attempt.outcome': 'success',
      'http.response.status_code': 200,
    });
    expect(answered.attributes['error.type']).toBeUndefined();
    expect(answered.statusCode).not.toBe(ERROR);

    const internal = spans.filter((s) => s.parentSpanId === request.spanId && s.kind !== CLIENT);
    expect(internal.map((s) => s.name).sort()).toEqual(['gateway.budget.reserve', 'gateway.ledger.append']);

    // Out: each provider request carried the trace, with its own attempt's span as the parent.
    const sent = h.openaiRequests().map((r) => r.headers.traceparent);
    expect(sent).toEqual([`00-${TRACE_ID}-${failed.spanId}-01`, `00-${TRACE_ID}-${answered.spanId}-01`]);
  });

  it('a non-streamed completion puts the provider response model, finish reasons and tokens on its attempt', async () => {
    h.openai.set({ content: 'fine', usage: { prompt_tokens: 5, completion_tokens: 1 } });
    const res = await fetch(`${url}/api/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
      body: JSON.stringify({ lane: 'free', project_id: 'p', messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(res.status).toBe(200);
    const spans = await spansOf(undefined, 4);
    const attempt = spans.find((s) => s.kind === CLIENT) as ReceivedSpan;
    expect(attempt.attributes).toMatchObject({
      [ATTR_GEN_AI_RESPONSE_MODEL]: expect.any(String),
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['stop'],
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 5,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 1,
    });
  });

  it('the request id once: the ledger id only when it differs (the client sent its own id)', async () => {
    h.openai.set({ chunks: ['ok'] });
    const own = await stream();
    await own.text();
    const request = (await spansOf(undefined, 4)).find((s) => s.kind === SERVER) as ReceivedSpan;
    expect(request.attributes['platform.request_id']).toBe(own.headers.get('x-request-id'));
    expect(request.attributes['gateway.request_id']).toBeUndefined();

    receiver.clear();
    const clientId = '5f0c6a2e-43aa-4d4b-8b2d-000000000043';
    const sent = await stream({ 'x-request-id': clientId });
    await sent.text();
    const echoed = (await spansOf(undefined, 4)).find((s) => s.kind === SERVER) as ReceivedSpan;
    expect(echoed.attributes['platform.request_id']).toBe(clientId);
    // The gateway minted its own ledger id: both are on the span.
    expect(echoed.attributes['gateway.request_id']).toEqual(expect.any(String));
    expect(echoed.attributes['gateway.request_id']).not.toBe(clientId);
  });

  it('without a traceparent the request starts its own trace; the provider still gets one', async () => {
    h.openai.set({ chunks: ['ok'] });
    const res = await stream();
    await res.text();
    const spans = await spansOf(undefined, 4);
    const request = spans.find((s) => s.kind === SERVER) as ReceivedSpan;
    expect(request.parentSpanId).toBe('');
    expect(request.traceId).not.toBe(TRACE_ID);
    const attempt = spans.find((s) => s.kind === CLIENT) as ReceivedSpan;
    expect(h.openaiRequests()[0]?.headers.traceparent).toBe(`00-${request.traceId}-${attempt.spanId}-01`);
  });

  it('a malformed traceparent is ignored: a new trace, the request answered', async () => {
    h.openai.set({ chunks: ['ok'] });
    const res = await stream({ traceparent: '00-zz-not-a-trace' });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await spansOf(undefined, 4);
    expect(spans.find((s) => s.kind === SERVER)?.parentSpanId).toBe('');
  });

  it('no prompt or answer text in any span by default', async () => {
    h.openai.set({ chunks: ANSWER_PARTS });
    const res = await stream();
    expect(await res.text()).toContain('answer 9c1e');
    const all = JSON.stringify(await spansOf(undefined, 4), (_k, v) =>
      typeof v === 'bigint' ? String(v) : v,
    );
    expect(all).toContain('proj-trace');
    expect(all).not.toContain(PROMPT);
    expect(all).not.toContain('7f3a');
    expect(all).not.toContain('9c1e');
    expect(all).not.toContain(caller.apiKey);
  });
});
