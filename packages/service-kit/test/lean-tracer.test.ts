import * as api from '@opentelemetry/api';
import {
  type Context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { LeanSpan, leanTracerOver } from '../src/lean-tracer';
import { encodeTraceExport } from '../src/otlp-protobuf';
import { startRemoteChild } from './span-script';

/**
 * The lean tracer (lean-tracer.ts) must record what the SDK's Tracer records:
 * the same spans, ids, parents, kinds, attributes (sanitised and limited the
 * same way), events, links and statuses, so that the SDK's serializer writes
 * the same bytes for both (times aside), and our encoder the same bytes as
 * the SDK's serializer for its spans.
 */

/** Ids in a fixed sequence, so that the SDK's and the lean run get the same. */
function fixedIds() {
  let n = 0;
  const next = (chars: number) => {
    n += 1;
    return n.toString(16).padStart(chars, '0');
  };
  return { generateTraceId: () => next(32), generateSpanId: () => next(16) };
}

async function run(lean: boolean, options: { sampler?: AlwaysOffSampler | ParentBasedSampler } = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'gateway' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    idGenerator: fixedIds(),
    spanLimits: { attributeCountLimit: 24, attributeValueLengthLimit: 40, eventCountLimit: 2 },
    ...(options.sampler ? { sampler: options.sampler } : {}),
  });
  const sdkTracer = provider.getTracer('@platform/gateway', '1.2.3');
  const tracer: Tracer = lean ? (leanTracerOver(api, sdkTracer) as Tracer) : sdkTracer;
  const remote: Context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const server = tracer.startSpan('POST', { kind: SpanKind.SERVER }, remote);
  server.setAttribute('http.request.method', 'POST').setAttribute('user_agent.original', 'curl – ünï ✓');
  const inside = trace.setSpan(remote, server);
  const attempt = tracer.startSpan(
    'chat free-a',
    {
      kind: SpanKind.CLIENT,
      attributes: { 'gen_ai.operation.name': 'chat', skipped: undefined, 'gateway.cost': 0.125 },
      links: [{ context: server.spanContext(), attributes: { 'link.reason': 'continuation' } }],
    },
    inside,
  );
  attempt.setAttributes({
    'gateway.target.position': 1,
    'gateway.byok': false,
    'gateway.negative': -42,
    'gateway.big': 2 ** 40 + 7,
    'gen_ai.response.finish_reasons': ['stop', 'length'],
    'gateway.numbers': [1, 2.5, -3],
    'gateway.long': 'x'.repeat(300),
    'gateway.long_array': ['y'.repeat(50), 'short'],
    'gateway.undefined': undefined,
    '': 'an empty key is dropped',
  });
  attempt.setAttribute('gateway.invalid', { nested: () => 1 } as unknown as string);
  attempt.setAttribute('gateway.target.position', 2);
  attempt.addEvent('gateway.target.skipped', { 'gateway.skip.reason': 'breaker_open' });
  attempt.addEvent('bare');
  attempt.addEvent('third, the first goes');
  attempt.recordException(new TypeError('no such target'));
  attempt.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited – 429' });
  attempt.end();
  attempt.setAttribute('after.end', 'ignored');
  attempt.end();
  for (let i = 0; i < 30; i += 1) server.setAttribute(`gateway.many.${i}`, i);
  tracer.startSpan('gateway.ledger.append', { kind: SpanKind.INTERNAL }, inside).end();
  const stated = startRemoteChild(tracer, server);
  stated.setStatus({ code: SpanStatusCode.OK });
  stated.setStatus({ code: SpanStatusCode.ERROR });
  stated.end();
  const active = tracer.startActiveSpan('active', (span) => {
    const child = tracer.startSpan('child');
    child.end();
    span.end();
    return span;
  });
  server.updateName('POST /api/v1/ai/chat/completions');
  server.setAttribute('http.response.status_code', 200);
  server.end();
  await provider.forceFlush();
  return { spans: exporter.getFinishedSpans(), server, active };
}

/** The span with its times fixed: the only fields where two runs may differ. */
function timeless(span: ReadableSpan): ReadableSpan {
  return Object.create(span, {
    startTime: { value: [1, 0] },
    endTime: { value: [2, 0] },
    duration: { value: [1, 0] },
    events: { value: span.events.map((e) => ({ ...e, time: [1, 5] })) },
  }) as ReadableSpan;
}

describe('the lean tracer records what the SDK records', () => {
  it('the same spans, byte for byte in OTLP, times aside', async () => {
    const sdk = await run(false);
    const lean = await run(true);
    expect(lean.spans.every((s) => s instanceof LeanSpan)).toBe(true);
    expect(lean.spans.map((s) => s.name)).toEqual(sdk.spans.map((s) => s.name));
    expect(lean.spans.map((s) => s.attributes)).toEqual(sdk.spans.map((s) => s.attributes));
    expect(lean.spans.map((s) => s.droppedAttributesCount)).toEqual(
      sdk.spans.map((s) => s.droppedAttributesCount),
    );
    expect(lean.spans.map((s) => s.events.map((e) => e.name))).toEqual(
      sdk.spans.map((s) => s.events.map((e) => e.name)),
    );
    const reference = Buffer.from(
      ProtobufTraceSerializer.serializeRequest(sdk.spans.map(timeless)) as Uint8Array,
    );
    const leanBytes = Buffer.from(
      ProtobufTraceSerializer.serializeRequest(lean.spans.map(timeless)) as Uint8Array,
    );
    expect(leanBytes.equals(reference)).toBe(true);
    // Our encoder writes the SDK serializer's bytes for the lean spans as they are.
    expect(
      Buffer.from(encodeTraceExport(lean.spans)).equals(
        Buffer.from(ProtobufTraceSerializer.serializeRequest(lean.spans) as Uint8Array),
      ),
    ).toBe(true);
    expect(lean.server.isRecording()).toBe(false);
    // startActiveSpan hands its span to the function and returns what that returns.
    expect(lean.active).toBe(lean.spans.find((s) => s.name === 'active'));
  });

  it('times are the wall clock, in order, to the microsecond', async () => {
    const before = Date.now();
    const { spans } = await run(true);
    const after = Date.now();
    for (const s of spans) {
      const start = s.startTime[0] * 1000 + s.startTime[1] / 1e6;
      const end = s.endTime[0] * 1000 + s.endTime[1] / 1e6;
      expect(start).toBeGreaterThanOrEqual(before - 2);
      expect(end).toBeLessThanOrEqual(after + 2);
      expect(end).toBeGreaterThanOrEqual(start);
      expect(s.duration[0]).toBeGreaterThanOrEqual(0);
      expect(s.startTime[1]).toBeLessThan(1e9);
    }
  });

  it("follows the SDK's sampler: nothing recorded when it says no, a valid context still carried", async () => {
    const off = await run(true, { sampler: new AlwaysOffSampler() });
    expect(off.spans).toEqual([]);
    expect(off.server.isRecording()).toBe(false);
    expect(off.server.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(off.server.spanContext().traceFlags).toBe(TraceFlags.NONE);
    // Parent-based: the sampled remote parent wins over the root sampler.
    const parentBased = await run(true, {
      sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    });
    expect(parentBased.spans.map((s) => s.name)).toContain('POST /api/v1/ai/chat/completions');
    expect(parentBased.spans.map((s) => s.name)).not.toContain('active');
  });

  it("picks a parent-based sampler's local delegate itself for our spans' children, as the SDK would", async () => {
    /** A root, a child its local delegate drops ('quiet') and one it keeps, and a child of 'quiet'. */
    async function scenario(lean: boolean) {
      const calls: string[] = [];
      const delegate = (which: string, record: (name: string) => boolean) => ({
        shouldSample: (_c: Context, _t: string, name: string) => {
          calls.push(`${which} ${name}`);
          return { decision: record(name) ? 2 : 0 };
        },
        toString: () => which,
      });
      const exporter = new InMemorySpanExporter();
      const provider = new TracerProvider({
        spanProcessors: [new SimpleSpanProcessor({ exporter })],
        idGenerator: fixedIds(),
        sampler: new ParentBasedSampler({
          root: new AlwaysOnSampler(),
          localParentSampled: delegate('sampled', (name) => name !== 'quiet'),
          localParentNotSampled: delegate('not-sampled', () => true),
        }),
      });
      const sdkTracer = provider.getTracer('t');
      const tracer: Tracer = lean ? (leanTracerOver(api, sdkTracer) as Tracer) : sdkTracer;
      const valid = jest.spyOn(api, 'isSpanContextValid');
      const server = tracer.startSpan('server');
      const quiet = tracer.startSpan('quiet', {}, trace.setSpan(ROOT_CONTEXT, server));
      tracer.startSpan('loud', {}, trace.setSpan(ROOT_CONTEXT, server)).end();
      tracer.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, quiet)).end();
      quiet.end();
      server.end();
      const checks = valid.mock.calls.length;
      valid.mockRestore();
      await provider.forceFlush();
      return { calls, checks, names: exporter.getFinishedSpans().map((x) => x.name) };
    }
    const sdk = await scenario(false);
    const lean = await scenario(true);
    expect(sdk.calls).toEqual(['sampled quiet', 'sampled loud', 'not-sampled child']);
    expect(lean.calls).toEqual(sdk.calls);
    expect(lean.names).toEqual(sdk.names);
    expect(lean.names).toEqual(['loud', 'child', 'server']);
    expect(sdk.checks).toBeGreaterThan(0);
    expect(lean.checks).toBe(0);
  });

  it("our encoder's copies of repeated attributes are the SDK serializer's bytes, values changing or not", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'gateway' }),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const tracer = leanTracerOver(api, provider.getTracer('@platform/gateway')) as Tracer;
    for (let i = 0; i < 60; i += 1) {
      const span = tracer.startSpan('chat free-a', { kind: SpanKind.CLIENT });
      span
        .setAttribute('gen_ai.operation.name', 'chat')
        .setAttribute('gateway.request_id', `req-${i}`)
        .setAttribute('gen_ai.request.model', i < 30 ? 'free-a' : 'free-b')
        .setAttribute('gateway.attempt', (i % 3) + 1)
        .setAttribute('gateway.byok', i % 7 === 0)
        .setAttribute('gateway.cost', i % 2 === 0 ? 0.125 : -1.5)
        .setAttribute('gateway.same', i < 50 ? 'ünï ✓' : 'z'.repeat(200))
        .setAttribute('gen_ai.response.finish_reasons', ['stop'])
        .setAttribute('gateway.long', 'x'.repeat(300));
      // The same key, a value of another type in some spans.
      span.setAttribute('gateway.mixed', i % 5 === 0 ? 7 : 'seven');
      span.end();
      const spans = exporter.getFinishedSpans();
      expect(
        Buffer.from(encodeTraceExport(spans)).equals(
          Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array),
        ),
      ).toBe(true);
      exporter.reset();
    }
  });

  it('hands every span to each processor when there are several', async () => {
    const first = new InMemorySpanExporter();
    const second = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [
        new SimpleSpanProcessor({ exporter: first }),
        new SimpleSpanProcessor({ exporter: second }),
      ],
    });
    const tracer = leanTracerOver(api, provider.getTracer('@platform/gateway')) as Tracer;
    tracer.startSpan('one').end();
    tracer.startSpan('two').end();
    await provider.forceFlush();
    expect(first.getFinishedSpans().map((s) => s.name)).toEqual(['one', 'two']);
    expect(second.getFinishedSpans().map((s) => s.name)).toEqual(['one', 'two']);
  });

  it('keeps the SDK tracer when the SDK is not the shape it was written against', () => {
    expect(leanTracerOver(api, {})).toBeUndefined();
    expect(leanTracerOver(api, undefined)).toBeUndefined();
  });
});
