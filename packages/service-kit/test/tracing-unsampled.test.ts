import * as api from '@opentelemetry/api';
import { UnsampledSpan } from '../src/lean-tracer';
import { inSpan, startSpan, startTracing, traced, traceRequests, withTraceHeaders } from '../src/tracing';

/**
 * With a sampler that records nothing, a request still carries a valid trace
 * context to its children and to the provider's `traceparent` (flags 00), as
 * the SDK's NonRecordingSpan does, but without the API's regular-expression
 * checks, the request span's listener or a promise around each traced step.
 * Nothing listens on the endpoint; nothing is recorded, so nothing is exported.
 */
describe('tracing on, nothing sampled', () => {
  const tracing = startTracing({
    service: 'test',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'parentbased_always_off' },
  });
  afterAll(async () => {
    await tracing?.shutdown();
  });

  /** `fn` inside a request span and an attempt span; how many listeners the request added. */
  function inAttempt<T>(fn: () => T, requestHeaders: Record<string, string> = {}): [T, number] {
    let result: T | undefined;
    let listeners = 0;
    const req = { method: 'POST', path: '/x', headers: requestHeaders, baseUrl: '' };
    const res = { once: () => (listeners += 1), locals: {} };
    traceRequests()(req as never, res as never, () => {
      const attempt = startSpan('chat m', undefined, 'client');
      result = inSpan(attempt, fn);
    });
    return [result as T, listeners];
  }

  it("carries a valid context: the provider's traceparent is the propagators', flags 00, no check or inject", () => {
    expect(tracing).toBeDefined();
    const valid = jest.spyOn(api.trace, 'isSpanContextValid');
    const inject = jest.spyOn(api.propagation, 'inject');
    try {
      const [[headers, attempt, request], listeners] = inAttempt(() => {
        const attemptSpan = api.trace.getActiveSpan();
        const child = startSpan('gateway.ledger.append', undefined);
        return [withTraceHeaders({ authorization: 'x' }), attemptSpan, child] as const;
      });
      expect(valid).not.toHaveBeenCalled();
      expect(inject).not.toHaveBeenCalled();
      expect(listeners).toBe(0);
      expect(attempt).toBeInstanceOf(UnsampledSpan);
      expect(attempt?.isRecording()).toBe(false);
      const sc = attempt?.spanContext() as api.SpanContext;
      expect(api.trace.isSpanContextValid(sc)).toBe(true);
      expect(request?.spanContext().traceId).toBe(sc.traceId);
      expect(headers.traceparent).toBe(`00-${sc.traceId}-${sc.spanId}-00`);
      valid.mockRestore();
      inject.mockRestore();
      // The SDK's own propagators write the same for that context.
      const theirs: Record<string, string> = { authorization: 'x' };
      api.propagation.inject(api.trace.setSpan(api.ROOT_CONTEXT, attempt as api.Span), theirs);
      expect(headers).toEqual(theirs);
    } finally {
      valid.mockRestore();
      inject.mockRestore();
    }
  });

  it("continues a caller's trace; a caller that sampled is recorded (parent-based)", () => {
    const notSampled = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    const [[headers], quiet] = inAttempt(() => [withTraceHeaders({})] as const, { traceparent: notSampled });
    expect(headers.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
    expect(quiet).toBe(0);
    const sampled = notSampled.replace(/-00$/, '-01');
    const [[recorded], listeners] = inAttempt(() => [api.trace.getActiveSpan()?.isRecording()] as const, {
      traceparent: sampled,
    });
    expect(recorded).toBe(true);
    expect(listeners).toBe(1);
  });

  it('traced() hands back the step itself, no promise around it, when nothing is sampled', async () => {
    const step = Promise.resolve(7);
    const [wrapped] = inAttempt(() => traced('gateway.budget.reserve', () => step));
    expect(wrapped).toBe(step);
    await expect(wrapped).resolves.toBe(7);
  });
});
