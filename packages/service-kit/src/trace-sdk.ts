import type { Tracer, TracerProvider } from '@opentelemetry/api';
import { batchSettingsOf, EncodingSpanProcessor } from './encoding-span-processor';
import { createOtlpProtobufTraceExporter, usesOtlpProtobuf } from './otlp-exporter';
import { PooledIdGenerator } from './random-ids';
import { type RequestScoped, requestScopedContextManager } from './request-context-manager';

type Env = Readonly<Record<string, string | undefined>>;
type Api = typeof import('@opentelemetry/api');
type SdkTrace = typeof import('@opentelemetry/sdk-trace');

/** The started SDK: its tracer, and how to flush and stop it. */
export type TraceSdk = {
  tracer: Tracer;
  /** The context manager when ours is the global one (request-context-manager.ts), else undefined. */
  requestScoped: RequestScoped | undefined;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
};

const listOf = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

const PIECES_PROPAGATORS = new Set(['tracecontext', 'baggage', 'none']);

/**
 * Whether startTraceSdk sets the SDK up from its pieces for `env`: OTLP over
 * HTTP (protobuf or JSON), the W3C propagators (or none), and the default
 * resource detectors, which are what docs/observability.md documents. Any
 * other choice (grpc, zipkin, console, b3, OTEL_NODE_RESOURCE_DETECTORS, the
 * SDK's experimental self-metrics) is left to `@opentelemetry/sdk-node`,
 * which reads it as it always has.
 */
export function piecesCover(env: Env): boolean {
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters.some((e) => e !== 'otlp')) return false;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol && protocol !== 'http/protobuf' && protocol !== 'http/json') return false;
  if (listOf(env.OTEL_PROPAGATORS).some((p) => !PIECES_PROPAGATORS.has(p))) return false;
  if (env.OTEL_NODE_RESOURCE_DETECTORS !== undefined) return false;
  return env.OTEL_NODE_EXPERIMENTAL_SDK_METRICS?.trim().toLowerCase() !== 'true';
}

/**
 * Starts the OpenTelemetry SDK for traces, from the standard OTEL_* variables.
 *
 * Where piecesCover(env) holds, it builds what `@opentelemetry/sdk-node`'s
 * NodeSDK builds for those variables (sdk-node 0.301: sdk.ts start() and
 * create-from-env.ts), from the same packages: the AsyncLocalStorage context
 * manager, the W3C trace-context and baggage propagators, the default
 * resource and detectors, the sampler and span limits of OTEL_TRACES_SAMPLER
 * and OTEL_SPAN_*, and a batch processor with the OTLP/HTTP exporter. Loading
 * sdk-node loads every exporter it can choose from (gRPC, Zipkin, Prometheus,
 * the logs and metrics SDKs): 8.8 MB of heap and 40 MB of resident memory in
 * a process that traces, against 2.8 MB and 22 MB for these pieces
 * (bench/results/tracing-cost.md, session 17). Anything else, sdk-node as before.
 */
export function startTraceSdk(service: string, env: Env, api: Api): TraceSdk {
  if (!piecesCover(env)) return startNodeSdk(service, env, api);
  const level = env.OTEL_LOG_LEVEL;
  const core = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  if (level)
    api.diag.setLogger(new api.DiagConsoleLogger(), { logLevel: core.diagLogLevelFromString(level) });
  const contextManager = contextManagerOf(api);
  const requestScoped = api.context.setGlobalContextManager(contextManager) ? contextManager : undefined;
  const propagators = [...new Set(listOf(env.OTEL_PROPAGATORS))];
  if (!propagators.includes('none')) {
    const names = propagators.length ? propagators : ['tracecontext', 'baggage'];
    const each = names.map((n) =>
      n === 'tracecontext' ? new core.W3CTraceContextPropagator() : new core.W3CBaggagePropagator(),
    );
    api.propagation.setGlobalPropagator(
      each.length === 1 ? (each[0] as (typeof each)[0]) : new core.CompositePropagator({ propagators: each }),
    );
  }
  const sdk = require('@opentelemetry/sdk-trace') as SdkTrace;
  const provider = new sdk.TracerProvider({
    resource: resourceOf(service, env),
    sampler: samplerOf(env, sdk, api),
    spanLimits: spanLimitsOf(env),
    idGenerator: new PooledIdGenerator(),
    spanProcessors: [spanProcessorOf(env, sdk)],
  });
  api.trace.setGlobalTracerProvider(provider);
  return {
    tracer: provider.getTracer(`@platform/${service}`),
    requestScoped,
    shutdown: () => provider.shutdown(),
    forceFlush: () => provider.forceFlush(),
  };
}

/** OpenTelemetry's AsyncLocalStorage context manager, keeping a request's context in the request's store. */
function contextManagerOf(api: Api) {
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  return requestScopedContextManager(AsyncLocalStorageContextManager, api.ROOT_CONTEXT).enable();
}

/** Whether `manager` is the API's context manager: a context the API activates is its active one. */
function isGlobal(manager: { active(): unknown }, api: Api): boolean {
  const probe = api.ROOT_CONTEXT.setValue(api.createContextKey('platform context manager probe'), true);
  return api.context.with(probe, () => manager.active() === probe);
}

/** NodeSDK's resource: the default one, its five default detectors, then our service name unless OTEL_SERVICE_NAME names one. */
function resourceOf(service: string, env: Env) {
  const r = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const detected = r.defaultResource().merge(
    r.detectResources({
      detectors: [
        r.serviceInstanceIdDetector,
        r.processDetector,
        r.hostDetector,
        r.osDetector,
        r.envDetector,
      ],
    }),
  );
  return env.OTEL_SERVICE_NAME
    ? detected
    : detected.merge(r.resourceFromAttributes({ 'service.name': service }));
}

/** OTEL_TRACES_SAMPLER and _ARG as sdk-node reads them (unset or unknown: the SDK's parent-based always-on). */
function samplerOf(env: Env, sdk: SdkTrace, api: Api) {
  const name = env.OTEL_TRACES_SAMPLER?.trim();
  if (!name) return undefined;
  const ratio = () => {
    const value = numberOf(env.OTEL_TRACES_SAMPLER_ARG);
    if (value === undefined || value < 0 || value > 1) {
      api.diag.error(
        `OTEL_TRACES_SAMPLER_ARG=${env.OTEL_TRACES_SAMPLER_ARG ?? ''} is blank or out of [0..1], defaulting to 1.`,
      );
      return 1;
    }
    return value;
  };
  switch (name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'parentbased_always_on':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'traceidratio':
      return new sdk.TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio()) });
    default:
      api.diag.error(`unknown OTEL_TRACES_SAMPLER value "${name}", using default`);
      return undefined;
  }
}

/** A number as @opentelemetry/core's getNumberFromEnv reads one: blank or not a number is unset. */
function numberOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isNaN(n) ? undefined : n;
}

/** OTEL_SPAN_* (and the general OTEL_ATTRIBUTE_*) as sdk-node reads them; unset leaves the SDK's default. */
function spanLimitsOf(env: Env) {
  return {
    attributeCountLimit:
      numberOf(env.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) ?? numberOf(env.OTEL_ATTRIBUTE_COUNT_LIMIT),
    attributeValueLengthLimit:
      numberOf(env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT) ?? numberOf(env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT),
    eventCountLimit: numberOf(env.OTEL_SPAN_EVENT_COUNT_LIMIT),
    linkCountLimit: numberOf(env.OTEL_SPAN_LINK_COUNT_LIMIT),
    attributePerEventCountLimit:
      numberOf(env.OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT) ??
      numberOf(env.OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT),
    attributePerLinkCountLimit:
      numberOf(env.OTEL_LINK_ATTRIBUTE_COUNT_LIMIT) ?? numberOf(env.OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT),
  };
}

/**
 * OTLP/HTTP protobuf: our encoder behind a processor that encodes each span as
 * it ends (otlp-exporter.ts, encoding-span-processor.ts). OTLP/HTTP JSON: the
 * SDK's exporter and batch processor, with the OTEL_BSP_* settings.
 */
function spanProcessorOf(env: Env, sdk: SdkTrace) {
  if (usesOtlpProtobuf(env)) return protobufProcessor(env);
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  return new sdk.BatchSpanProcessor({
    exporter: new OTLPTraceExporter(),
    maxQueueSize: nonNegative(env.OTEL_BSP_MAX_QUEUE_SIZE),
    scheduledDelayMillis: nonNegative(env.OTEL_BSP_SCHEDULE_DELAY),
    exportTimeoutMillis: nonNegative(env.OTEL_BSP_EXPORT_TIMEOUT),
    maxExportBatchSize: nonNegative(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
  });
}

/** Our OTLP protobuf encoder behind the processor that encodes each span as it ends. */
function protobufProcessor(env: Env) {
  return new EncodingSpanProcessor(
    createOtlpProtobufTraceExporter(),
    batchSettingsOf(env),
  ) as unknown as import('@opentelemetry/sdk-trace').SpanProcessor;
}

function nonNegative(value: string | undefined): number | undefined {
  const n = numberOf(value);
  return n === undefined || n < 0 ? undefined : n;
}

/** `@opentelemetry/sdk-node` for the choices the pieces leave to it (see piecesCover); exported for the test that compares the two. */
export function startNodeSdk(service: string, env: Env, api: Api): TraceSdk {
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const contextManager = contextManagerOf(api);
  const sdk = new NodeSDK({
    contextManager,
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: service }),
    ...(usesOtlpProtobuf(env)
      ? {
          spanProcessors: [protobufProcessor(env)],
        }
      : {}),
    idGenerator: new PooledIdGenerator(),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  const provider = () =>
    (
      api.trace.getTracerProvider() as {
        getDelegate?: () => TracerProvider & { forceFlush?: () => Promise<void> };
      }
    ).getDelegate?.();
  return {
    tracer: api.trace.getTracer(`@platform/${service}`),
    // NodeSDK registers the manager it is given, unless one is registered already.
    requestScoped: isGlobal(contextManager, api) ? contextManager : undefined,
    shutdown: () => sdk.shutdown(),
    forceFlush: async () => {
      await provider()?.forceFlush?.();
    },
  };
}
