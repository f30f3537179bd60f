import { startTracing, traced, tracingOn, tracingRequested, withTraceHeaders } from '../src/tracing';

describe('tracing is on only when the standard OTEL_* variables ask for it', () => {
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'gateway' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('%j -> %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });

  it('off: startTracing loads no SDK, and the helpers pass through untouched', async () => {
    expect(startTracing({ service: 'test', env: {} })).toBeUndefined();
    expect(tracingOn()).toBe(false);
    const headers = { authorization: 'Bearer x' };
    expect(withTraceHeaders(headers)).toBe(headers);
    await expect(traced('x', async () => 42)).resolves.toBe(42);
    const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry/sdk-node'));
    expect(loaded).toEqual([]);
  });
});
