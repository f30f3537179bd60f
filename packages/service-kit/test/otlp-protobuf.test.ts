import { type Context, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { batchSettingsOf, EncodingSpanProcessor } from '../src/encoding-span-processor';
import { type EncodedSpans, encodeTraceExport } from '../src/otlp-protobuf';
import { startRemoteChild } from './span-script';

/**
 * Our encoder must write exactly the bytes of the SDK's own protobuf
 * serializer (the reference a collector is tested against), for every shape a
 * span can take: kinds, remote and local parents, trace state, events, links,
 * status messages, and every attribute type including non-ASCII text, long
 * strings (multi-byte lengths), negative and 64-bit integers, doubles and arrays.
 */

async function finishedSpans(): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'gateway', 'host.name': 'hôte-1', pid: 4242 }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('@platform/gateway', '1.2.3');
  const other = provider.getTracer('@platform/other');
  const remote: Context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const server = tracer.startSpan(
    'POST /api/v1/ai/chat/stream',
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': 'POST', 'user_agent.original': 'curl/8 – ünïcødé ✓ 😀' },
    },
    remote,
  );
  const inside = trace.setSpan(remote, server);
  const attempt = tracer.startSpan(
    'chat free-a',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gateway.target.position': 1,
        'gateway.byok': false,
        'gateway.cost': 0.125,
        'gateway.negative': -42,
        'gateway.big': 2 ** 40 + 7,
        'gateway.negative_big': -(2 ** 40) - 3,
        'gen_ai.response.finish_reasons': ['stop', 'length'],
        'gateway.flags': [true, false],
        'gateway.numbers': [1, 2.5, -3],
        'gateway.long': 'x'.repeat(300),
        'gateway.long_unicode': 'é'.repeat(200),
        'gateway.nearly_short': 'ü'.repeat(42),
      },
      links: [
        { context: server.spanContext(), attributes: { 'link.reason': 'continuation' } },
        { context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: TraceFlags.NONE } },
      ],
    },
    inside,
  );
  attempt.addEvent('gateway.target.skipped', { 'gateway.skip.reason': 'breaker_open' });
  attempt.addEvent('bare');
  attempt.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited – 429' });
  attempt.end();
  other.startSpan('gateway.ledger.append', { kind: SpanKind.INTERNAL }, inside).end();
  const stated = startRemoteChild(tracer, server);
  stated.setStatus({ code: SpanStatusCode.OK });
  stated.end();
  server.setAttribute('http.response.status_code', 200);
  server.end();
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

describe('encodeTraceExport: the OTLP/protobuf request, as the SDK writes it', () => {
  it('is byte for byte the reference serializer for spans of every shape', async () => {
    const spans = await finishedSpans();
    expect(spans).toHaveLength(4);
    const reference = ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;
    const ours = encodeTraceExport(spans);
    expect(ours.length).toBe(reference.length);
    expect(Buffer.from(ours).equals(Buffer.from(reference))).toBe(true);
  });

  it('matches it for a batch the size of an export (lengths of several bytes at every level)', async () => {
    const spans = await finishedSpans();
    const batch = Array.from({ length: 600 }, (_v, i) => spans[i % spans.length] as ReadableSpan);
    const reference = Buffer.from(ProtobufTraceSerializer.serializeRequest(batch) as Uint8Array);
    expect(reference.length).toBeGreaterThan(2_097_152 / 8);
    expect(Buffer.from(encodeTraceExport(batch)).equals(reference)).toBe(true);
  });

  it('writes ids in any case as the reference does, and an invalid one as Buffer decodes hex', async () => {
    const [first] = await finishedSpans();
    const withIds = (traceId: string, spanId: string): ReadableSpan =>
      Object.assign(Object.create(first as object), {
        spanContext: () => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED }),
        parentSpanContext: undefined,
      });
    const upper = withIds('4BF92F3577B34DA6A3CE929D0E0E4736', '00F067aa0BA902B7');
    expect(
      Buffer.from(encodeTraceExport([upper])).equals(
        Buffer.from(ProtobufTraceSerializer.serializeRequest([upper]) as Uint8Array),
      ),
    ).toBe(true);
    // Not hex from the 5th byte (and one past ASCII): those bytes before it, zeros after, as
    // Buffer.write(id, 'hex') gives; the reference's arithmetic would write other bytes.
    const bytes = Buffer.from(
      encodeTraceExport([withIds('4bf92f35zz'.padEnd(32, 'f'), 'ab€d'.padEnd(16, '1'))]),
    );
    const idAt = (id: Buffer) => bytes.indexOf(id);
    expect(
      idAt(Buffer.concat([Buffer.from([10, 16]), Buffer.from('4bf92f35', 'hex'), Buffer.alloc(12)])),
    ).toBeGreaterThan(-1);
    expect(idAt(Buffer.concat([Buffer.from([18, 8, 0xab]), Buffer.alloc(7)]))).toBeGreaterThan(-1);
  });

  it('an empty batch is an empty request', () => {
    expect(encodeTraceExport([])).toHaveLength(0);
  });
});

describe('EncodingSpanProcessor: spans encoded as they end, batched as the SDK batches them', () => {
  function capture() {
    const exports: EncodedSpans[][] = [];
    const exporter = {
      export(items: EncodedSpans[], done: (r: { code: number }) => void) {
        exports.push(items);
        done({ code: 0 });
      },
      shutdown: async () => {},
    };
    return { exports, exporter };
  }

  it('an export holds the same bytes the SDK would send for those spans', async () => {
    const spans = await finishedSpans();
    const { exports, exporter } = capture();
    const processor = new EncodingSpanProcessor(exporter, batchSettingsOf({}));
    for (const span of spans) processor.onEnd(span);
    expect(exports).toHaveLength(0);
    await processor.forceFlush();
    expect(exports).toHaveLength(1);
    const reference = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
    expect(Buffer.from(encodeTraceExport(exports[0] as EncodedSpans[])).equals(reference)).toBe(true);
  });

  it('a full batch goes at once, the rest on flush; unsampled spans ignored, none after shutdown', async () => {
    const spans = await finishedSpans();
    const span = spans[0] as ReadableSpan;
    const { exports, exporter } = capture();
    const processor = new EncodingSpanProcessor(
      exporter,
      batchSettingsOf({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '3', OTEL_BSP_MAX_QUEUE_SIZE: '3' }),
    );
    for (let i = 0; i < 7; i += 1) processor.onEnd(span);
    expect(exports.map((items) => items.reduce((n, item) => n + item.count, 0))).toEqual([3, 3]);
    const unsampled = {
      ...span,
      spanContext: () => ({ ...span.spanContext(), traceFlags: TraceFlags.NONE }),
    };
    processor.onEnd(unsampled as ReadableSpan);
    await processor.shutdown();
    expect(exports.map((items) => items.reduce((n, item) => n + item.count, 0))).toEqual([3, 3, 1]);
    processor.onEnd(span);
    expect(exports).toHaveLength(3);
  });
});
