import * as api from '@opentelemetry/api';
import { requestContext } from '@platform/logging';
import { inSpan, startSpan, startTracing, traceRequests, withTraceHeaders } from '../src/tracing';

/**
 * withTraceHeaders writes `traceparent` itself for the gateway's spans with the
 * default propagators: the same headers the SDK's propagators write for the same
 * context, and their path whenever baggage or suppression is in the context.
 * Nothing listens on the endpoint; no span is ended, so nothing is exported.
 */
describe('withTraceHeaders with tracing on', () => {
  const tracing = startTracing({
    service: 'test',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'always_on' },
  });
  afterAll(async () => {
    await tracing?.shutdown();
  });

  /** `fn` inside a request span and an attempt span, as the gateway runs an upstream call. */
  function inAttempt<T>(fn: () => T, requestHeaders: Record<string, string> = {}): T {
    let result: T | undefined;
    const req = { method: 'POST', path: '/x', headers: requestHeaders, baseUrl: '' };
    const res = { once: () => undefined, locals: {} };
    traceRequests()(req as never, res as never, () => {
      const attempt = startSpan('chat m', undefined, 'client');
      result = inSpan(attempt, fn);
    });
    return result as T;
  }

  /** What the SDK's own propagators write for the active context. */
  function sdkHeaders(base: Record<string, string>): Record<string, string> {
    const out = { ...base };
    api.propagation.inject(api.context.active(), out);
    return out;
  }

  /** withTraceHeaders' headers, and whether it went through the propagators' inject. */
  function ours(base: Record<string, string>): [Record<string, string>, boolean] {
    const inject = jest.spyOn(api.propagation, 'inject');
    try {
      const headers = withTraceHeaders(base);
      return [headers, inject.mock.calls.length > 0];
    } finally {
      inject.mockRestore();
    }
  }

  it('writes what the propagators write, the attempt span as parent, without them', () => {
    expect(tracing).toBeDefined();
    const [[headers, injected], theirs, attemptId] = inAttempt(
      (): [[Record<string, string>, boolean], Record<string, string>, string | undefined] => [
        ours({ authorization: 'x' }),
        sdkHeaders({ authorization: 'x' }),
        api.trace.getActiveSpan()?.spanContext().spanId,
      ],
    );
    expect(injected).toBe(false);
    expect(headers).toEqual(theirs);
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(headers.traceparent?.split('-')[2]).toBe(attemptId);
  });

  it("continues a caller's trace and keeps its tracestate", () => {
    const caller = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=abc',
    };
    const [[headers, injected], theirs] = inAttempt(
      (): [[Record<string, string>, boolean], Record<string, string>] => [ours({}), sdkHeaders({})],
      caller,
    );
    expect(injected).toBe(false);
    expect(headers).toEqual(theirs);
    expect(headers.traceparent?.startsWith('00-0af7651916cd43dd8448eb211c80319c-')).toBe(true);
    expect(headers.tracestate).toBe('vendor=abc');
  });

  it('with baggage in the context, the propagators write it (the general path)', () => {
    const baggage = api.propagation.createBaggage({ tenant: { value: 't1' } });
    const [[headers, injected], theirs] = inAttempt(() =>
      api.context.with(
        api.propagation.setBaggage(api.context.active(), baggage),
        (): [[Record<string, string>, boolean], Record<string, string>] => [ours({}), sdkHeaders({})],
      ),
    );
    expect(injected).toBe(true);
    expect(headers).toEqual(theirs);
    expect(headers.baggage).toBe('tenant=t1');
  });

  it("keeps the request span in the request's store, and in a with-scope outside one", async () => {
    const req = { method: 'GET', path: '/x', headers: {}, baseUrl: '' };
    const res = { once: () => undefined, locals: {} };
    const inStore = await requestContext.run({ requestId: 'r1' }, async () => {
      traceRequests()(req as never, res as never, () => undefined);
      await new Promise((resolve) => setTimeout(resolve, 1));
      const active = api.trace.getActiveSpan()?.spanContext().spanId;
      const stored = api.trace.getSpan(requestContext.getStore()?.otel ?? api.ROOT_CONTEXT);
      return [active, stored?.spanContext().spanId];
    });
    expect(inStore[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(inStore[1]).toBe(inStore[0]);
    let outside: string | undefined;
    traceRequests()(req as never, res as never, () => {
      outside = api.trace.getActiveSpan()?.spanContext().spanId;
    });
    expect(outside).toMatch(/^[0-9a-f]{16}$/);
    expect(api.trace.getActiveSpan()).toBeUndefined();
  });
});
