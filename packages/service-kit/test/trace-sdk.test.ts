import * as api from '@opentelemetry/api';
import { piecesCover, startNodeSdk, startTraceSdk, type TraceSdk } from '../src/trace-sdk';

/**
 * startTraceSdk builds from the SDK's pieces what `@opentelemetry/sdk-node`
 * builds for the same variables: the same sampler, span limits, resource and
 * propagators. Each case starts both (NodeSDK reads process.env, so the case's
 * variables are put there too) and compares what their tracers hold. Nothing
 * listens on the endpoint and no span is ended, so nothing is exported.
 */

type Internals = {
  _sampler: { toString(): string };
  _spanLimits: Record<string, unknown>;
  _resource: { attributes: Record<string, unknown> };
};

type Seen = {
  sampler: string;
  limits: Record<string, unknown>;
  resource: Record<string, unknown>;
  fields: string[];
};

const BASE = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' };

async function seen(start: () => TraceSdk): Promise<Seen> {
  const sdk = start();
  try {
    const t = sdk.tracer as unknown as Internals;
    const { 'service.instance.id': _random, ...resource } = t._resource.attributes;
    return {
      sampler: t._sampler.toString(),
      limits: t._spanLimits,
      resource,
      fields: api.propagation.fields(),
    };
  } finally {
    await sdk.shutdown();
    api.trace.disable();
    api.context.disable();
    api.propagation.disable();
  }
}

describe('the SDK from its pieces, beside sdk-node', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
    Object.assign(process.env, saved);
  });

  it.each<[string, Record<string, string>]>([
    ['the defaults', {}],
    ['always_off', { OTEL_TRACES_SAMPLER: 'always_off' }],
    [
      'a parent-based ratio',
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' },
    ],
    ['a ratio out of range', { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '7' }],
    [
      'span limits',
      {
        OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '7',
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '100',
        OTEL_SPAN_EVENT_COUNT_LIMIT: '3',
      },
    ],
    ['one propagator', { OTEL_PROPAGATORS: 'tracecontext' }],
    ['no propagator', { OTEL_PROPAGATORS: 'none' }],
    [
      'a named service with resource attributes',
      { OTEL_SERVICE_NAME: 'svc', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,team=ai' },
    ],
    ['OTLP JSON', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }],
  ])('%s: the same sampler, limits, resource and propagators', async (_name, vars) => {
    const env: Record<string, string> = { ...BASE, ...vars };
    Object.assign(process.env, env);
    expect(piecesCover(env)).toBe(true);
    const pieces = await seen(() => startTraceSdk('gateway', env, api));
    const nodeSdk = await seen(() => startNodeSdk('gateway', env, api));
    expect(pieces).toEqual(nodeSdk);
    expect(pieces.resource['service.name']).toBe(env.OTEL_SERVICE_NAME ?? 'gateway');
  });

  it.each<[Record<string, string>, boolean]>([
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_PROPAGATORS: 'tracecontext,baggage' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, true],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, false],
    [{ OTEL_TRACES_EXPORTER: 'console' }, false],
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, false],
    [{ OTEL_PROPAGATORS: 'b3' }, false],
    [{ OTEL_NODE_RESOURCE_DETECTORS: 'env' }, false],
    [{ OTEL_NODE_EXPERIMENTAL_SDK_METRICS: 'true' }, false],
  ])('%j: pieces %s, else sdk-node', (env, expected) => {
    expect(piecesCover(env)).toBe(expected);
  });
});
