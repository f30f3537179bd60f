import type { Attributes, Context, ContextAPI, Span, TraceAPI } from '@opentelemetry/api';
import { addAccessLogFields } from '@platform/logging';
import type { RequestHandler } from 'express';
import { isOwnSpan, leanTracerOver } from './lean-tracer';
import { realOtelApi } from './otel-api';
import type { RequestScoped } from './request-context-manager';
import { startTraceSdk } from './trace-sdk';

/**
 * OpenTelemetry traces, on only when the standard OTEL_* variables ask for
 * them (docs/observability.md). Off, nothing of the SDK is loaded: every
 * helper here starts with one check of `on` and returns, so the request path
 * pays a branch, not a no-op span per call. On, the SDK starts from the rest
 * of the standard variables (protocol, sampler, headers, batch sizes) and
 * exports over OTLP/HTTP (trace-sdk.ts).
 */

type Env = Readonly<Record<string, string | undefined>>;

type On = {
  api: {
    trace: TraceAPI;
    context: ContextAPI;
    propagation: typeof import('@opentelemetry/api').propagation;
    ROOT_CONTEXT: Context;
  };
  tracer: ReturnType<TraceAPI['getTracer']>;
  requestSpanKey: symbol;
  /** Our context manager, when it is the global one: a request's context goes into the request's store. */
  requestScoped: RequestScoped | undefined;
  /** The headers the configured propagators read (`traceparent`, `tracestate`, `baggage` by default). */
  propagationFields: readonly string[];
  /**
   * The propagators are the default pair (W3C trace context and baggage,
   * OTEL_PROPAGATORS unset or `tracecontext,baggage`): withTraceHeaders may
   * write `traceparent` itself for our own spans (see there).
   */
  defaultPropagators: boolean;
  isTracingSuppressed: (context: Context) => boolean;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: prompts and answers go on spans. */
  captureContent: boolean;
  statusError: number;
};

let on: On | undefined;

/** Span options without attributes, shared (the values of api.SpanKind). */
const CLIENT_OPTIONS = { kind: 2 } as const;
const INTERNAL_OPTIONS = { kind: 0 } as const;
const SERVER_OPTIONS = { kind: 1 } as const;

/** A span, or undefined while tracing is off (every helper takes both). */
export type TraceSpan = Span | undefined;

/**
 * Whether the environment asks for traces: an OTLP endpoint (the general or
 * the traces one) or an explicit OTEL_TRACES_EXPORTER, unless
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracingRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporter);
}

/** The standard OTEL_* variables of `source` (the env.ts of each service keeps them for startTracing). */
export function otelVariablesOf(source: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(source))
    if (value && name.startsWith('OTEL_')) out[name] = value;
  return out;
}

export type Tracing = {
  /** Exports what the batch processor holds now (tests, shutdown). */
  flush(): Promise<void>;
  /** Exports the rest and stops; tracing is off afterwards. */
  shutdown(): Promise<void>;
};

/**
 * Starts the SDK when `env` asks for it (see tracingRequested), else returns
 * undefined and loads nothing. Traces only: the SDK's metrics and logs stay
 * off (metrics are Prometheus' job here). Call once per process, before the
 * app is built: createServiceApp adds the request span only when tracing is on.
 */
export function startTracing(opts: { service: string; env: Env }): Tracing | undefined {
  if (!tracingRequested(opts.env) || on) return undefined;
  // Loaded here, not at the top: with tracing off none of this is in memory.
  const api = realOtelApi();
  const sdk = startTraceSdk(opts.service, opts.env, api);
  const sdkTracer = sdk.tracer;
  on = {
    api,
    // The SDK's sampler, ids, resource, limits and processors behind a leaner span (lean-tracer.ts).
    tracer: leanTracerOver(api, sdkTracer) ?? sdkTracer,
    requestSpanKey: api.createContextKey('platform request span'),
    requestScoped: sdk.requestScoped,
    propagationFields: api.propagation.fields().map((f) => f.toLowerCase()),
    defaultPropagators: defaultPropagatorsIn(opts.env, api.propagation.fields()),
    isTracingSuppressed: (require('@opentelemetry/core') as typeof import('@opentelemetry/core'))
      .isTracingSuppressed,
    captureContent:
      opts.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
    statusError: api.SpanStatusCode.ERROR,
  };
  return {
    flush: () => sdk.forceFlush(),
    shutdown: async () => {
      on = undefined;
      await sdk.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}

/** Whether OTEL_PROPAGATORS leaves the SDK's default propagators (and the API reports their headers). */
function defaultPropagatorsIn(env: Env, fields: readonly string[]): boolean {
  const names = (env.OTEL_PROPAGATORS ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  const named = names.length === 0 || names.join(',') === 'tracecontext,baggage';
  return named && fields.join(',') === 'traceparent,tracestate,baggage';
}

/** True while the SDK runs (the cheap check hot paths make first). */
export function tracingOn(): boolean {
  return on !== undefined;
}

/**
 * Whether spans may carry prompt and answer text: only with tracing on and
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (the variable the
 * OpenTelemetry GenAI instrumentations use). Off by default.
 */
export function tracingCapturesContent(): boolean {
  return on?.captureContent === true;
}

/** The route as Express matched it (`/api/v1/ai/chat/stream`), else undefined. */
function routeOf(req: Parameters<RequestHandler>[0]): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : undefined;
}

/**
 * Whether a request has any header the propagators read: most have none (no
 * caller's trace), and then extracting (each propagator looking its headers
 * up and parsing nothing) gives the root context anyway.
 */
function carriesContext(
  headers: Parameters<RequestHandler>[0]['headers'],
  fields: readonly string[],
): boolean {
  for (const field of fields) if (headers[field] !== undefined) return true;
  return false;
}

/**
 * One SERVER span per request, continuing the caller's trace when it sent a
 * valid `traceparent`; active for everything the request runs, so child spans
 * and the upstream `traceparent` hang under it. Its context goes into the
 * request's own store (request-context-manager.ts; the request-id middleware
 * runs first), else, outside one, into a `context.with`. The trace id goes on
 * the access-log line to find the trace from the log.
 */
export function traceRequests(): RequestHandler {
  return (req, res, next) => {
    const t = on;
    if (!t) return next();
    const parent = carriesContext(req.headers, t.propagationFields)
      ? t.api.propagation.extract(t.api.ROOT_CONTEXT, req.headers)
      : t.api.ROOT_CONTEXT;
    const span = t.tracer.startSpan(req.method, SERVER_OPTIONS, parent);
    const ctx = t.api.trace.setSpan(new LinkedContext(parent, t.requestSpanKey, span), span);
    addAccessLogFields(res, { trace_id: span.spanContext().traceId });
    // Not sampled: its context still goes to children and upstream calls, but nothing is
    // recorded, so no attributes and no listener for the end.
    if (!span.isRecording()) {
      enter(t, ctx, next);
      return;
    }
    // Set after the start, not passed to it: the SDK cleans start attributes twice (copies
    // included); the standard samplers do not read them.
    span.setAttribute('http.request.method', req.method).setAttribute('url.path', req.path);
    const agent = req.headers['user-agent'];
    if (agent) span.setAttribute('user_agent.original', agent);
    // 'close' comes after 'finish' too, or alone when the client went first: one listener for both.
    res.once('close', () => {
      const route = routeOf(req);
      if (route) span.updateName(`${req.method} ${route}`).setAttribute('http.route', route);
      const requestId = res.locals.requestId;
      if (typeof requestId === 'string') span.setAttribute('platform.request_id', requestId);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (!res.writableFinished) span.setAttribute('platform.client_gone', true);
      if (res.statusCode >= 500) span.setStatus({ code: t.statusError });
      span.end();
    });
    enter(t, ctx, next);
  };
}

/** Runs the rest of the request with `ctx` (LinkedContexts: the API's setValue copies a Map each). */
function enter(t: On, ctx: Context, next: () => void): void {
  if (t.requestScoped?.enterRequest(ctx)) next();
  else t.api.context.with(ctx, next);
}

/**
 * A child of the active span (a request's, an attempt's), or undefined while
 * tracing is off. The attributes are set after the start rather than passed
 * to it: the SDK cleans start attributes twice, copying them each time, and
 * none of the standard samplers (OTEL_TRACES_SAMPLER) reads them.
 */
export function startSpan(
  name: string,
  attributes: Attributes | undefined,
  kind: 'internal' | 'client' = 'internal',
): TraceSpan {
  const t = on;
  if (!t) return undefined;
  const span = t.tracer.startSpan(name, kind === 'client' ? CLIENT_OPTIONS : INTERNAL_OPTIONS);
  if (attributes) span.setAttributes(attributes);
  return span;
}

/** Runs `fn` with `span` active (its children and outgoing `traceparent` hang under it). */
export function inSpan<T>(span: TraceSpan, fn: () => T): T {
  const t = on;
  if (!t || !span) return fn();
  // Inside a request the active context is a LinkedContext: setSpan adds a link, copies no Map.
  return t.api.context.with(t.api.trace.setSpan(t.api.context.active(), span), fn);
}

/**
 * A Context as one key and value over a parent. The API's own context copies
 * its whole Map on every setValue; a request sets three (its span, the
 * request-span key, an attempt's span) and reads a few, so a chain of three
 * links is cheaper to build and as cheap to read. Contexts built on top of
 * one (setSpan, suppressTracing) are links too.
 */
class LinkedContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly key: symbol,
    private readonly value: unknown,
  ) {}

  getValue(key: symbol): unknown {
    return key === this.key ? this.value : this.parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return new LinkedContext(this, key, value);
  }

  deleteValue(key: symbol): Context {
    return new LinkedContext(this, key, undefined);
  }
}

/** Ends `span`; with `errorType`, marks it failed (`error.type`, status ERROR). */
export function endSpan(span: TraceSpan, attributes?: Attributes, errorType?: string): void {
  if (!span) return;
  if (attributes) span.setAttributes(attributes);
  if (errorType) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: on?.statusError ?? 2 });
  }
  span.end();
}

/**
 * `fn` inside a span of its own, ended when it settles (failed when it throws).
 * The span is not made active: `fn` starts no spans of its own (a leaf, such
 * as the budget reservation), so no context is built for it. Off, or not
 * sampled, `fn` is called as it is, without a wrapping promise.
 */
export function traced<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!on) return fn();
  const span = startSpan(name, undefined);
  // Unsampled: nothing to end or mark, so no wrapping promise either.
  if (!span?.isRecording()) return fn();
  return tracedOn(span, fn);
}

async function tracedOn<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    const value = await fn();
    endSpan(span);
    return value;
  } catch (err) {
    endSpan(span, undefined, err instanceof Error ? err.name : 'error');
    throw err;
  }
}

/** Adds attributes to the active span (an attempt's inside inSpan). */
export function annotateSpan(attributes: Attributes): void {
  const t = on;
  if (!t) return;
  t.api.trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span (an attempt's inside inSpan); undefined while tracing is off. */
export function activeSpan(): TraceSpan {
  const t = on;
  if (!t) return undefined;
  return t.api.trace.getActiveSpan();
}

/** The request's SERVER span, from anywhere inside the request; undefined while tracing is off. */
export function requestSpan(): TraceSpan {
  const t = on;
  if (!t) return undefined;
  return t.api.context.active().getValue(t.requestSpanKey) as Span | undefined;
}

/** Adds attributes to the request's SERVER span, from anywhere inside the request. */
export function annotateRequest(attributes: Attributes, errorType?: string): void {
  const t = on;
  if (!t) return;
  const span = t.api.context.active().getValue(t.requestSpanKey) as Span | undefined;
  if (!span) return;
  span.setAttributes(attributes);
  if (errorType) span.setAttribute('error.type', errorType);
}

/** Adds an event (a skipped target, a continuation) to the request's span. */
export function requestEvent(name: string, attributes: Attributes): void {
  const t = on;
  if (!t) return;
  const span = t.api.context.active().getValue(t.requestSpanKey) as Span | undefined;
  span?.addEvent(name, attributes);
}

/**
 * `headers` plus the active context's `traceparent` (and `tracestate`) for an
 * outgoing call: a copy, since callers share their header objects; the same
 * object while tracing is off.
 */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  const t = on;
  if (!t) return headers;
  const out = { ...headers };
  const ctx = t.api.context.active();
  const span = t.defaultPropagators ? t.api.trace.getSpan(ctx) : undefined;
  if (isOwnSpan(span) && !t.api.propagation.getBaggage(ctx) && !t.isTracingSuppressed(ctx)) {
    // What the default propagators write for it, without their loop and the API's two regular
    // expressions per call (our spans' contexts are valid: generated, or a checked parent's);
    // baggage, suppression or other propagators take the general path.
    const sc = span.spanContext();
    const flags = sc.traceFlags === 1 ? '01' : `0${Number(sc.traceFlags || 0).toString(16)}`;
    out.traceparent = `00-${sc.traceId}-${sc.spanId}-${flags}`;
    if (sc.traceState) out.tracestate = sc.traceState.serialize();
    return out;
  }
  t.api.propagation.inject(ctx, out);
  return out;
}
