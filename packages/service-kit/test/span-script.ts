import { createTraceState, ROOT_CONTEXT, type Span, type Tracer, trace } from '@opentelemetry/api';

/**
 * A span whose parent is `parent` seen as remote, with a trace state: the
 * case both encoder tests (otlp-protobuf, lean-tracer) put in their scripts.
 */
export function startRemoteChild(tracer: Tracer, parent: Span, name = 'stated'): Span {
  return tracer.startSpan(
    name,
    {},
    trace.setSpanContext(ROOT_CONTEXT, {
      ...parent.spanContext(),
      isRemote: true,
      traceState: createTraceState('vendor=value,other=1'),
    }),
  );
}
