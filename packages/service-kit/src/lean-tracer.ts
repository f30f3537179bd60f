import type {
  Attributes,
  AttributeValue,
  Context,
  Exception,
  HrTime,
  Link,
  Span,
  SpanContext,
  SpanKind,
  SpanOptions,
  SpanStatus,
  TimeInput,
  Tracer,
} from '@opentelemetry/api';
import type { EncodableSpan } from './otlp-protobuf';

/**
 * A leaner Tracer and Span behind the OpenTelemetry API, for the SDK that
 * startTracing sets up. Profiled under loaded chat at 100 % sampling
 * (bench/results/tracing-cost.md), the SDK's `Tracer.startSpan` and `SpanImpl`
 * were the largest part of tracing's own CPU after the exporter's encoding:
 * per span they clean the (absent) start attributes twice, map the (absent)
 * links, record the SDK's own span metrics (a counter and an up-down counter
 * with attribute objects and a closure, even with no meter provider), take
 * Date.now and performance.now to rebuild an offset, and turn times into
 * HrTime through several helpers; every setAttribute goes through an options
 * object and a WeakSet-based value check.
 *
 * Everything the SDK is configured with stays the SDK's, set up from the
 * standard OTEL_* variables by trace-sdk.ts: the sampler, the id
 * generator, the resource, the span limits and the span processors (with
 * their exporter), taken from the SDK's own Tracer. The spans are the SDK's
 * ReadableSpan in shape (any processor or exporter takes them; the unit test
 * checks the reference OTLP serializer writes the same bytes for them as for
 * the SDK's). What is left out: the SDK's self-observability span metrics
 * (`otel.sdk.span.*`, which need a meter provider that startTracing never
 * sets) and the diag warnings for misuse (operations on an ended span are
 * ignored silently).
 */

type Api = typeof import('@opentelemetry/api');
type Scope = EncodableSpan['instrumentationScope'];
type Resource = EncodableSpan['resource'];
type Core = typeof import('@opentelemetry/core');

/** The parts of the SDK's Tracer (sdk-trace 3.x, fields private in TypeScript only) this one uses. */
type SdkTracerInternals = {
  instrumentationScope: Scope;
  _sampler: {
    shouldSample(
      context: Context,
      traceId: string,
      name: string,
      kind: SpanKind,
      attributes: Attributes,
      links: Link[],
    ): { decision: number; attributes?: Readonly<Attributes>; traceState?: SpanContext['traceState'] };
  };
  _idGenerator: { generateTraceId(): string; generateSpanId(): string };
  _resource: Resource;
  _spanProcessor: {
    onStart(span: Span, context: Context): void;
    onEnding?(span: Span): void;
    onEnd(span: LeanSpan): void;
  };
  _spanLimits: {
    attributeCountLimit?: number;
    attributeValueLengthLimit?: number;
    linkCountLimit?: number;
    eventCountLimit?: number;
    attributePerEventCountLimit?: number;
    attributePerLinkCountLimit?: number;
  };
};

type Sampler = SdkTracerInternals['_sampler'];

/** The delegates of the SDK's ParentBasedSampler for a local parent (fields private in TypeScript only). */
type LocalParentDelegates = { sampled: Sampler; notSampled: Sampler };

/**
 * When the SDK's sampler is a ParentBasedSampler (the default, and any
 * `parentbased_*` OTEL_TRACES_SAMPLER), its delegates for a local parent: for
 * a child of one of our spans it would re-check the parent's context with the
 * API's two regular expressions and then pick one of these by the parent's
 * sampled flag; our spans' contexts are valid and local, so the tracer picks
 * it directly (0.5 % of a loaded request's profile at a 10 % ratio, session
 * 30). Undefined for any other sampler, or a ParentBasedSampler not of this shape.
 */
function localParentDelegatesOf(sampler: Sampler): LocalParentDelegates | undefined {
  const s = sampler as Partial<Record<'_localParentSampled' | '_localParentNotSampled', Partial<Sampler>>>;
  if (
    sampler.constructor?.name !== 'ParentBasedSampler' ||
    typeof s._localParentSampled?.shouldSample !== 'function' ||
    typeof s._localParentNotSampled?.shouldSample !== 'function'
  )
    return undefined;
  return { sampled: s._localParentSampled as Sampler, notSampled: s._localParentNotSampled as Sampler };
}

type Limits = {
  attributeCountLimit: number;
  attributeValueLengthLimit: number;
  linkCountLimit: number;
  eventCountLimit: number;
  attributePerEventCountLimit: number;
  attributePerLinkCountLimit: number;
};

type Shared = {
  api: Api;
  core: Core;
  scope: Scope;
  resource: Resource;
  processor: SdkTracerInternals['_spanProcessor'];
  limits: Limits;
};

type Event = { name: string; time: HrTime; attributes?: Attributes; droppedAttributesCount?: number };

const EMPTY_LINKS: Link[] = [];
const NO_EVENTS: Event[] = [];

/**
 * Room for one more event or link under the SDK's count limit: the list to
 * push onto (a fresh one in place of the shared empty one; the oldest entry
 * dropped when full), or none when the limit is 0; and how many were dropped.
 */
function roomFor<T>(list: T[], shared: T[], limit: number): { list: T[] | null; dropped: number } {
  if (limit === 0) return { list: null, dropped: 1 };
  const own = list === shared ? [] : list;
  if (own.length < limit) return { list: own, dropped: 0 };
  own.shift();
  return { list: own, dropped: 1 };
}
const NO_ATTRIBUTES: Attributes = Object.freeze({}) as Attributes;
const UNSET = Object.freeze({ code: 0 });
const RECORD_AND_SAMPLED = 2;
const NOT_RECORD = 0;

/** Epoch milliseconds (fractional) from performance.now(): the offset is re-read from Date.now() once a second, as the SDK re-reads it per span. */
let offsetMs = Date.now() - performance.now();
let offsetReadAt = performance.now();
function nowMs(): number {
  const perf = performance.now();
  if (perf - offsetReadAt > 1000) {
    // The wall clock moves in whole milliseconds: keep the finer offset unless it drifted past one.
    const fresh = Date.now() - perf;
    if (Math.abs(fresh - offsetMs) > 1) offsetMs = fresh;
    offsetReadAt = perf;
  }
  return perf + offsetMs;
}

function msToHrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

/** Whether every item is a string, number, boolean or null (the SDK's AnyValue, flat). */
function primitives(items: readonly unknown[]): boolean {
  for (const item of items) {
    const type = typeof item;
    if (item !== null && type !== 'string' && type !== 'number' && type !== 'boolean') return false;
  }
  return true;
}

/** A TimeInput (or now) as epoch milliseconds. */
function msOf(input: TimeInput | undefined): number {
  if (input === undefined) return nowMs();
  if (Array.isArray(input)) return (input[0] as number) * 1000 + (input[1] as number) / 1e6;
  if (input instanceof Date) return input.getTime();
  // A number: performance.now()-relative when it is not past it (as the SDK reads it), else epoch ms.
  return input <= performance.now() ? input + offsetMs : input;
}

function durationOf(start: HrTime, end: HrTime): HrTime {
  let seconds = end[0] - start[0];
  let nanos = end[1] - start[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return [seconds, nanos];
}

/** A span: the SDK's ReadableSpan fields, set as the request goes; handed to the processor at its end. */
export class LeanSpan implements Span {
  /**
   * Attribute keys and values in the order first set: the encoder reads them
   * as they are (otlp-protobuf.ts). An object that gains twenty keys one by
   * one turns into a slow dictionary for both the setting and the encoder's
   * walk; `attributes` builds that object only for whoever asks (another
   * processor, another exporter).
   */
  readonly attributeKeys: string[] = [];
  readonly attributeValues: AttributeValue[] = [];
  links: Link[] = EMPTY_LINKS;
  /** Shared and empty until the first addEvent (most spans have none). */
  events: Event[] = NO_EVENTS;
  status: SpanStatus = UNSET;
  /** Epoch milliseconds, fractional (the encoder reads these; startTime and endTime are built on request). */
  startMs: number;
  endMs = 0;
  ended = false;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  readonly resource: Resource;
  readonly instrumentationScope: Scope;

  constructor(
    private readonly shared: Shared,
    private readonly context: SpanContext,
    public name: string,
    readonly kind: SpanKind,
    readonly parentSpanContext: SpanContext | undefined,
    startMs: number,
  ) {
    this.startMs = startMs;
    this.resource = shared.resource;
    this.instrumentationScope = shared.scope;
  }

  get startTime(): HrTime {
    return msToHrTime(this.startMs);
  }

  get endTime(): HrTime {
    return this.endMs > 0 ? msToHrTime(this.endMs) : [0, 0];
  }

  get duration(): HrTime {
    return this.endMs > 0 ? durationOf(this.startTime, this.endTime) : [-1, -1];
  }

  get attributes(): Attributes {
    const out: Attributes = {};
    const keys = this.attributeKeys;
    for (let i = 0; i < keys.length; i++) out[keys[i] as string] = this.attributeValues[i];
    return out;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.ended || value === undefined) return this;
    const keys = this.attributeKeys;
    const at = keys.indexOf(key);
    if (at === -1 && keys.length >= this.shared.limits.attributeCountLimit) {
      // As the SDK's maybeAddAttribute decides: a new key past the limit is dropped and counted.
      if (key.length > 0) this.droppedAttributesCount += 1;
      return this;
    }
    const type = typeof value;
    let kept: AttributeValue;
    if (type === 'number' || type === 'boolean') kept = value;
    else if (type === 'string' && key.length > 0) {
      const limit = this.shared.limits.attributeValueLengthLimit;
      kept = (value as string).length > limit ? (value as string).substring(0, limit) : value;
    } else if (Array.isArray(value) && key.length > 0 && primitives(value)) {
      // A list of strings, numbers or booleans (finish reasons): copied, as the SDK copies it.
      const limit = this.shared.limits.attributeValueLengthLimit;
      kept =
        limit === Infinity
          ? value.slice()
          : (value.map((v) =>
              typeof v === 'string' && v.length > limit ? v.substring(0, limit) : v,
            ) as AttributeValue);
    } else {
      // Byte arrays, maps, nested lists, an empty key, anything invalid: the SDK's own check and copy.
      const scratch: Attributes = {};
      const decision = this.shared.core.maybeAddAttribute({
        key,
        value,
        attributes: scratch,
        limits: this.shared.limits,
        currentAttributesCount: 0,
      });
      if (decision !== this.shared.core.AddAttributeDecision.ADD_NEW) return this;
      kept = scratch[key] as AttributeValue;
    }
    if (at === -1) {
      keys.push(key);
      this.attributeValues.push(kept);
    } else this.attributeValues[at] = kept;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    const room = roomFor(this.events, NO_EVENTS, this.shared.limits.eventCountLimit);
    this.droppedEventsCount += room.dropped;
    if (!room.list) return this;
    this.events = room.list;
    let attributes: Attributes | undefined;
    if (this.shared.core.isTimeInput(attributesOrTime)) {
      if (!this.shared.core.isTimeInput(time)) time = attributesOrTime as TimeInput;
    } else attributes = attributesOrTime as Attributes | undefined;
    this.events.push({
      name,
      time: msToHrTime(msOf(time)),
      ...this.shared.core.cleanSimpleAttributes(attributes, {
        attributeCountLimit: this.shared.limits.attributePerEventCountLimit,
        attributeValueLengthLimit: this.shared.limits.attributeValueLengthLimit,
      }),
    });
    return this;
  }

  addLink(link: Link): this {
    if (this.ended) return this;
    const room = roomFor(this.links, EMPTY_LINKS, this.shared.limits.linkCountLimit);
    this.droppedLinksCount += room.dropped;
    if (!room.list) return this;
    this.links = room.list;
    this.links.push(linkOf(this.shared, link));
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === 0 || this.status.code === 1) return this;
    this.status =
      status.code === 2 && typeof status.message === 'string'
        ? { code: 2, message: status.message }
        : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    // An end before the start (a given time) is the start, as the SDK makes it.
    this.endMs = Math.max(this.startMs, msOf(endTime));
    this.shared.processor.onEnding?.(this);
    this.ended = true;
    this.shared.processor.onEnd(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else if (exception) {
      if (exception.code) attributes['exception.type'] = String(exception.code);
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message'])
      this.addEvent('exception', attributes, time);
  }
}

/**
 * A span the sampler did not record: its context, carried to children and to
 * the provider's `traceparent` (flags 00), and nothing else. The API's
 * NonRecordingSpan does the same, but a child of one, and every outgoing
 * call under one, re-checks its context with the API's two regular
 * expressions: ~0.8 % of an unsampled loaded request's profile
 * (bench/results/tracing-cost.md, session 30). This one's context was
 * generated here or taken from a checked parent, so it is known valid.
 */
export class UnsampledSpan implements Span {
  constructor(private readonly context: SpanContext) {}
  spanContext(): SpanContext {
    return this.context;
  }
  setAttribute(): this {
    return this;
  }
  setAttributes(): this {
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(): this {
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {}
  isRecording(): boolean {
    return false;
  }
  recordException(): void {}
}

/** Whether `span` is one this tracer made (recorded or not): its context needs no check. */
export function isOwnSpan(span: Span | undefined): span is LeanSpan | UnsampledSpan {
  return span instanceof LeanSpan || span instanceof UnsampledSpan;
}

function linkOf(shared: Shared, link: Link): Link {
  return {
    context: link.context,
    ...shared.core.cleanAttributes(link.attributes, {
      attributeCountLimit: shared.limits.attributePerLinkCountLimit,
      attributeValueLengthLimit: shared.limits.attributeValueLengthLimit,
    }),
  };
}

/** The SDK's Tracer as `startSpan` of sdk-trace 3.x decides, with LeanSpan for the spans it records. */
class LeanTracer implements Tracer {
  private readonly localParent: LocalParentDelegates | undefined;

  constructor(
    private readonly shared: Shared,
    private readonly sdk: SdkTracerInternals,
  ) {
    this.localParent = localParentDelegatesOf(sdk._sampler);
  }

  startSpan(name: string, options: SpanOptions = {}, context?: Context): Span {
    const { api, core } = this.shared;
    let ctx = context ?? api.context.active();
    if (options.root) ctx = api.trace.deleteSpan(ctx);
    if (core.isTracingSuppressed(ctx)) return api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT);
    const parentSpan = api.trace.getSpan(ctx);
    const parent = parentSpan?.spanContext();
    const spanId = this.sdk._idGenerator.generateSpanId();
    let traceId: string;
    let traceState: SpanContext['traceState'];
    let validParent: SpanContext | undefined;
    // Our spans' contexts were checked (their parent's) or generated when they started: the
    // API's check runs two regular expressions per span, so only other parents get it.
    const ownParent = isOwnSpan(parentSpan);
    if (parent && (ownParent || api.trace.isSpanContextValid(parent))) {
      traceId = parent.traceId;
      traceState = parent.traceState;
      validParent = parent;
    } else traceId = this.sdk._idGenerator.generateTraceId();
    const kind = options.kind ?? 0;
    const links = options.links?.length ? options.links.map((l) => linkOf(this.shared, l)) : EMPTY_LINKS;
    const startAttributes = options.attributes
      ? (core.cleanAttributes(options.attributes, {
          attributeCountLimit: Infinity,
          attributeValueLengthLimit: Infinity,
        }).attributes ?? NO_ATTRIBUTES)
      : NO_ATTRIBUTES;
    // A child of one of our spans under a parent-based sampler: the delegate it would pick.
    const sampler =
      this.localParent && validParent && ownParent
        ? (validParent.traceFlags & 1) === 1
          ? this.localParent.sampled
          : this.localParent.notSampled
        : this.sdk._sampler;
    const sampling = sampler.shouldSample(ctx, traceId, name, kind, startAttributes, links);
    if (sampling.traceState) traceState = sampling.traceState;
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: sampling.decision === RECORD_AND_SAMPLED ? 1 : 0,
      traceState,
    };
    if (sampling.decision === NOT_RECORD) return new UnsampledSpan(spanContext);
    const span = new LeanSpan(this.shared, spanContext, name, kind, validParent, msOf(options.startTime));
    if (links !== EMPTY_LINKS) {
      const limit = this.shared.limits.linkCountLimit;
      span.links = links.length > limit ? links.slice(links.length - limit) : links;
      span.droppedLinksCount = links.length - span.links.length;
    }
    if (startAttributes !== NO_ATTRIBUTES) span.setAttributes(startAttributes);
    if (sampling.attributes) span.setAttributes(sampling.attributes as Attributes);
    this.shared.processor.onStart(span, ctx);
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...args: unknown[]): ReturnType<F> {
    const fn = args[args.length - 1] as F;
    const opts = (args.length >= 2 ? args[0] : undefined) as SpanOptions | undefined;
    const parent = (args.length >= 3 ? args[1] : undefined) as Context | undefined;
    const { api } = this.shared;
    const ctx = parent ?? api.context.active();
    const span = this.startSpan(name, opts, ctx);
    return api.context.with(api.trace.setSpan(ctx, span), fn as (s: Span) => ReturnType<F>, undefined, span);
  }
}

/**
 * The SDK hands its Tracer a MultiSpanProcessor that loops over the
 * processors it was given (fixed since the provider was made): with one, that
 * one, called directly (startTracing gives exactly one).
 */
function onlyProcessorOf(
  processor: SdkTracerInternals['_spanProcessor'],
): SdkTracerInternals['_spanProcessor'] {
  const list = (processor as { _spanProcessors?: unknown })._spanProcessors;
  if (!Array.isArray(list) || list.length !== 1) return processor;
  const only = list[0] as Partial<SdkTracerInternals['_spanProcessor']> | undefined;
  return typeof only?.onStart === 'function' && typeof only.onEnd === 'function'
    ? (only as SdkTracerInternals['_spanProcessor'])
    : processor;
}

/**
 * A LeanTracer over the SDK's Tracer `sdkTracer` (its sampler, ids, resource,
 * limits and processors), or undefined when that Tracer is not the shape
 * this was written against (another SDK version): the caller keeps the SDK's.
 */
export function leanTracerOver(api: Api, sdkTracer: unknown): Tracer | undefined {
  const sdk = sdkTracer as Partial<SdkTracerInternals> | undefined;
  if (
    !sdk?.instrumentationScope ||
    typeof sdk._sampler?.shouldSample !== 'function' ||
    typeof sdk._idGenerator?.generateSpanId !== 'function' ||
    !sdk._resource ||
    typeof sdk._spanProcessor?.onEnd !== 'function' ||
    !sdk._spanLimits
  )
    return undefined;
  const core = require('@opentelemetry/core') as Core;
  const l = sdk._spanLimits;
  const limits: Limits = {
    attributeCountLimit: l.attributeCountLimit ?? 128,
    attributeValueLengthLimit:
      l.attributeValueLengthLimit !== undefined && l.attributeValueLengthLimit > 0
        ? l.attributeValueLengthLimit
        : Infinity,
    linkCountLimit: l.linkCountLimit ?? 128,
    eventCountLimit: l.eventCountLimit ?? 128,
    attributePerEventCountLimit: l.attributePerEventCountLimit ?? 128,
    attributePerLinkCountLimit: l.attributePerLinkCountLimit ?? 128,
  };
  return new LeanTracer(
    {
      api,
      core,
      scope: sdk.instrumentationScope,
      resource: sdk._resource,
      processor: onlyProcessorOf(sdk._spanProcessor),
      limits,
    },
    sdk as SdkTracerInternals,
  );
}
