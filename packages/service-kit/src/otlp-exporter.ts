import type { EncodedSpansExporter } from './encoding-span-processor';
import { type EncodableSpan, type EncodedSpans, encodeTraceExport } from './otlp-protobuf';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Whether the SDK would export traces with its OTLP/HTTP protobuf exporter:
 * OTEL_TRACES_EXPORTER unset or `otlp`, and the traces protocol (its own
 * variable, else the general one) unset or `http/protobuf`. Only then does
 * startTracing put its faster encoder in; grpc, http/json, zipkin and console
 * stay the SDK's own.
 */
export function usesOtlpProtobuf(env: Env): boolean {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter && exporter !== 'otlp') return false;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  return !protocol || protocol === 'http/protobuf';
}

/**
 * The SDK's OTLP/HTTP protobuf trace exporter (the same transport, retries,
 * timeouts, headers, endpoint and compression, all from the standard OTEL_*
 * variables) with encodeTraceExport in place of the reference serializer: the
 * same bytes for about a third of the CPU. It takes spans, or spans already
 * encoded by EncodingSpanProcessor. Loaded only when tracing is on.
 */
export function createOtlpProtobufTraceExporter(): EncodedSpansExporter {
  const { OTLPExporterBase } =
    require('@opentelemetry/otlp-exporter-base') as typeof import('@opentelemetry/otlp-exporter-base');
  const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } =
    require('@opentelemetry/otlp-exporter-base/node-http') as typeof import('@opentelemetry/otlp-exporter-base/node-http');
  const { ProtobufTraceSerializer } =
    require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
  const delegate = createOtlpHttpExportDelegate<(EncodableSpan | EncodedSpans)[], unknown>(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
    {
      serializeRequest: (items: (EncodableSpan | EncodedSpans)[]) => encodeTraceExport(items),
      deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
    },
    // What the SDK's own exporter calls itself in its self-observability metrics (off here).
    'otlp_http_span_exporter',
    {
      name: 'span',
      countItems: (items: (EncodableSpan | EncodedSpans)[]) =>
        items.reduce((n, item) => n + ('count' in item ? item.count : 1), 0),
    },
    undefined,
  );
  return new OTLPExporterBase(delegate);
}
