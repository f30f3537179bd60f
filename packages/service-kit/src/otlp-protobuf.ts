import type { Attributes, AttributeValue, HrTime, SpanContext } from '@opentelemetry/api';

/**
 * The OTLP/protobuf `ExportTraceServiceRequest` of a batch of finished spans,
 * byte for byte what @opentelemetry/otlp-transformer's ProtobufTraceSerializer
 * writes (test/otlp-protobuf.test.ts compares them), in about a third of its
 * CPU: one pass instead of a size estimate plus a write, ids written by
 * Buffer's native hex decoder instead of a Uint8Array per id, and the bytes of
 * each attribute key (a small fixed set here) encoded once per process. The
 * exporter serialises on the main thread, so at 100 % sampling this is a
 * measurable part of what tracing costs a loaded gateway (bench/results/tracing-cost.md).
 */

/** The parts of an SDK ReadableSpan the encoding reads (structural: the SDK's type is not imported). */
export type EncodableSpan = {
  name: string;
  kind: number;
  spanContext(): SpanContext;
  parentSpanContext?: SpanContext | undefined;
  startTime: HrTime;
  endTime: HrTime;
  attributes: Attributes;
  /** A LeanSpan's times as it keeps them, epoch milliseconds: read instead of startTime and endTime. */
  startMs?: number;
  endMs?: number;
  /** A LeanSpan's attributes as it keeps them (lean-tracer.ts): read instead of `attributes`. */
  attributeKeys?: readonly string[];
  attributeValues?: readonly unknown[];
  droppedAttributesCount: number;
  events: ReadonlyArray<{
    name: string;
    time: HrTime;
    attributes?: Attributes;
    droppedAttributesCount?: number;
  }>;
  droppedEventsCount: number;
  links: ReadonlyArray<{
    context: SpanContext;
    attributes?: Attributes;
    droppedAttributesCount?: number;
  }>;
  droppedLinksCount: number;
  status: { code: number; message?: string };
  resource: { attributes: Attributes; schemaUrl?: string };
  instrumentationScope: {
    name: string;
    version?: string;
    schemaUrl?: string;
    attributes?: Attributes;
    droppedAttributesCount?: number;
  };
};

const HAS_IS_REMOTE = 256;
const IS_REMOTE = 512;
const TWO_32 = 4294967296;
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** Encoded `1: key` of a KeyValue (tag, length, UTF-8 bytes), per key, for the life of the process. */
const keyBytes = new Map<string, Buffer>();
const KEY_CACHE_LIMIT = 4096;

/**
 * The last encoded `KeyValue` (tag, length, key, value) of each span
 * attribute key with a primitive value, to copy when the next span has the
 * same value. Most of a gateway request's attributes repeat from request to
 * request (method, route, operation, provider, model, target, lane, project,
 * currency, statuses), so most are one lookup and one copy instead of a key,
 * a value and two lengths. A key whose value keeps changing (ids, counts,
 * latencies) stops being refreshed once its misses outgrow its hits.
 */
type EncodedPair = { value: unknown; bytes: Uint8Array | undefined; hits: number; misses: number };
const pairBytes = new Map<string, EncodedPair>();
/** Longer pairs are not kept (a long user agent, a captured message). */
const PAIR_MAX_BYTES = 160;

/**
 * Copies shorter than this go byte by byte; longer ones through
 * TypedArray.prototype.set (a builtin, no native call), which in a micro
 * benchmark (Node 24) copied the ~37-byte cached attributes 2-4x faster
 * than the loop and was even with it below ~16 bytes.
 */
const LOOP_COPY_MAX = 16;

class Writer {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  ensure(extra: number): void {
    const needed = this.pos + extra;
    if (needed <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A varint of a non-negative integer below 2^53. */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    if (value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 127) {
        buf[pos++] = (v & 127) | 128;
        v >>>= 7;
      }
      buf[pos++] = v;
    } else {
      let low = value >>> 0;
      let high = (value / TWO_32) >>> 0;
      while (high > 0 || low > 127) {
        buf[pos++] = (low & 127) | 128;
        low = ((low >>> 7) | (high << 25)) >>> 0;
        high >>>= 7;
      }
      buf[pos++] = low;
    }
    this.pos = pos;
  }

  /** A negative int64 as protobuf writes it: ten bytes of two's complement. */
  negativeVarint(value: number): void {
    const abs = Math.abs(value);
    let low = ~(abs >>> 0) >>> 0;
    let high = ~((abs / TWO_32) >>> 0) >>> 0;
    low = (low + 1) >>> 0;
    if (low === 0) high = (high + 1) >>> 0;
    this.ensure(10);
    while (high > 0 || low > 127) {
      this.buf[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buf[this.pos++] = low & 127;
  }

  byte(value: number): void {
    this.ensure(1);
    this.buf[this.pos++] = value;
  }

  /** Opens a length-delimited field: one byte reserved for its length (most are short). */
  open(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Closes what `open` started: writes its length, moving the content when the length needs more bytes. */
  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buf[at] = length;
      return;
    }
    const size = length < 16384 ? 2 : length < 2097152 ? 3 : length < 268435456 ? 4 : 5;
    this.ensure(size - 1);
    this.buf.copy(this.buf, at + size, at + 1, this.pos);
    this.pos += size - 1;
    let v = length;
    let p = at;
    while (v > 127) {
      this.buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[p] = v;
  }

  string(value: string): void {
    const n = value.length;
    if (n < 43) {
      // At most 126 bytes of UTF-8: the length fits the one reserved byte.
      this.ensure(n * 3 + 1);
      const buf = this.buf;
      const start = this.pos;
      let pos = start + 1;
      for (let i = 0; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c > 127) {
          pos = -1;
          break;
        }
        buf[pos++] = c;
      }
      if (pos >= 0) {
        // ASCII, written in JavaScript: cheaper than a native call for a short string.
        buf[start] = n;
        this.pos = pos;
        return;
      }
      const written = this.buf.write(value, this.pos + 1, 'utf8');
      this.buf[this.pos] = written;
      this.pos += written + 1;
      return;
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.varint(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  /** 16 or 8 bytes of a hex id, length first. */
  hexId(hex: string): void {
    const bytes = hex.length >>> 1;
    this.ensure(bytes + 1);
    this.buf[this.pos++] = bytes;
    const written = this.buf.write(hex, this.pos, bytes, 'hex');
    if (written < bytes) this.buf.fill(0, this.pos + written, this.pos + bytes);
    this.pos += bytes;
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.u32(value >>> 0);
  }

  /** Four bytes little-endian at pos (room ensured): plain stores, not Buffer's checked writeUInt32LE. */
  private u32(value: number): void {
    const buf = this.buf;
    const pos = this.pos;
    buf[pos] = value & 255;
    buf[pos + 1] = (value >>> 8) & 255;
    buf[pos + 2] = (value >>> 16) & 255;
    buf[pos + 3] = value >>> 24;
    this.pos = pos + 4;
  }

  /** An HrTime as nanoseconds in a fixed64, as the reference computes it (exact above 2^53). */
  hrTime(time: HrTime): void {
    this.time(time[0], time[1]);
  }

  /** Epoch milliseconds as the HrTime LeanSpan's startTime would give (msToHrTime), without building it. */
  ms(value: number): void {
    let seconds = Math.floor(value / 1000);
    let nanos = Math.round((value - seconds * 1000) * 1e6);
    if (nanos >= 1e9) {
      seconds += 1;
      nanos -= 1e9;
    }
    this.time(seconds, nanos);
  }

  time(seconds: number, nanos: number): void {
    const lowSeconds = seconds & 65535;
    const highSeconds = (seconds / 65536) >>> 0;
    const fromLow = lowSeconds * 1e9;
    const fromHigh = highSeconds * 1e9;
    const low32 = (fromLow >>> 0) + ((((fromHigh & 65535) * 65536) >>> 0) + nanos);
    const high =
      (Math.floor(fromLow / TWO_32) + ((fromHigh / 65536) >>> 0) + Math.floor(low32 / TWO_32)) >>> 0;
    this.ensure(8);
    this.u32(low32 >>> 0);
    this.u32(high);
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** `1: key` of a KeyValue, from the per-key cache. */
  key(key: string): void {
    let encoded = keyBytes.get(key);
    if (!encoded) {
      const body = Buffer.from(key, 'utf8');
      const head = new Writer(8);
      head.byte(10);
      head.varint(body.length);
      encoded = Buffer.concat([head.buf.subarray(0, head.pos), body]);
      if (keyBytes.size < KEY_CACHE_LIMIT) keyBytes.set(key, encoded);
    }
    const n = encoded.length;
    this.ensure(n);
    if (n > LOOP_COPY_MAX) {
      this.buf.set(encoded, this.pos);
      this.pos += n;
      return;
    }
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos++] = encoded[i] as number;
    this.pos = pos;
  }

  raw(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(n);
    if (n > LOOP_COPY_MAX) {
      this.buf.set(bytes, this.pos);
      this.pos += n;
      return;
    }
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos++] = bytes[i] as number;
    this.pos = pos;
  }

  result(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

function anyValue(w: Writer, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.byte(10);
      w.string(value);
      return;
    case 'boolean':
      w.byte(16);
      w.byte(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        w.byte(24);
        if (value >= 0) w.varint(value);
        else w.negativeVarint(value);
      } else {
        w.byte(33);
        w.double(value);
      }
      return;
  }
  if (value instanceof Uint8Array) {
    w.byte(58);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.byte(42);
    const array = w.open();
    for (const item of value) {
      w.byte(10);
      const at = w.open();
      anyValue(w, item);
      w.close(at);
    }
    w.close(array);
  } else if (typeof value === 'object' && value !== null) {
    w.byte(50);
    const list = w.open();
    for (const [k, v] of Object.entries(value)) {
      w.byte(10);
      const kv = w.open();
      w.key(k);
      w.byte(18);
      const at = w.open();
      anyValue(w, v);
      w.close(at);
      w.close(kv);
    }
    w.close(list);
  }
}

/** Repeated KeyValue under field `tag` (the tag byte: field << 3 | 2). */
function attributes(w: Writer, attrs: Attributes, tag: number): void {
  for (const key in attrs) {
    if (!Object.hasOwn(attrs, key)) continue;
    w.byte(tag);
    const kv = w.open();
    w.key(key);
    w.byte(18);
    const value = w.open();
    anyValue(w, attrs[key] as AttributeValue | undefined);
    w.close(value);
    w.close(kv);
  }
}

function flagsOf(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 255) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

/** `9: KeyValue` of a span, from pairBytes when the value is the one last encoded for that key. */
function spanAttribute(w: Writer, key: string, value: unknown): void {
  const cached = pairBytes.get(key);
  if (cached !== undefined && cached.value === value && cached.bytes !== undefined) {
    cached.hits += 1;
    w.raw(cached.bytes);
    return;
  }
  const start = w.pos;
  w.byte(74);
  const kv = w.open();
  w.key(key);
  w.byte(18);
  const at = w.open();
  anyValue(w, value);
  w.close(at);
  w.close(kv);
  if (typeof value === 'object' || w.pos - start > PAIR_MAX_BYTES) return;
  if (cached === undefined) {
    if (pairBytes.size < KEY_CACHE_LIMIT)
      pairBytes.set(key, { value, bytes: copyOf(w, start), hits: 0, misses: 0 });
    return;
  }
  cached.misses += 1;
  // A value that changes more often than not is not worth a copy per span; tried again now and then.
  if (cached.misses > cached.hits + 16) {
    cached.bytes = undefined;
    if (cached.misses > cached.hits + 4096) {
      cached.hits = 0;
      cached.misses = 0;
    }
    return;
  }
  cached.value = value;
  cached.bytes = copyOf(w, start);
}

/** A copy (not a view) of what the writer wrote since `start`. */
function copyOf(w: Writer, start: number): Uint8Array {
  return new Uint8Array(w.buf.subarray(start, w.pos));
}

function span(w: Writer, s: EncodableSpan): void {
  const ctx = s.spanContext();
  w.byte(10);
  w.hexId(ctx.traceId);
  w.byte(18);
  w.hexId(ctx.spanId);
  const traceState = ctx.traceState?.serialize();
  if (traceState) {
    w.byte(26);
    w.string(traceState);
  }
  const parentId = s.parentSpanContext?.spanId;
  if (parentId) {
    w.byte(34);
    w.hexId(parentId);
  }
  w.byte(42);
  w.string(s.name);
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.byte(48);
    w.varint(kind);
  }
  w.byte(57);
  if (s.startMs !== undefined && s.endMs !== undefined) {
    w.ms(s.startMs);
    w.byte(65);
    w.ms(s.endMs);
  } else {
    w.hrTime(s.startTime);
    w.byte(65);
    w.hrTime(s.endTime);
  }
  const keys = s.attributeKeys;
  if (keys) {
    const values = s.attributeValues as readonly unknown[];
    for (let i = 0; i < keys.length; i++) spanAttribute(w, keys[i] as string, values[i]);
  } else attributes(w, s.attributes, 74);
  if (
    s.droppedAttributesCount === 0 &&
    s.events.length === 0 &&
    s.droppedEventsCount === 0 &&
    s.links.length === 0 &&
    s.droppedLinksCount === 0 &&
    !s.status.message &&
    s.status.code >= 0 &&
    s.status.code < 128
  ) {
    // The usual end of a span, in one go: nothing dropped, no events or links, a status without message.
    w.ensure(16);
    const buf = w.buf;
    const pos = w.pos;
    buf[pos] = 80;
    buf[pos + 1] = 0;
    buf[pos + 2] = 96;
    buf[pos + 3] = 0;
    buf[pos + 4] = 112;
    buf[pos + 5] = 0;
    buf[pos + 6] = 122;
    buf[pos + 7] = 2;
    buf[pos + 8] = 24;
    buf[pos + 9] = s.status.code;
    buf[pos + 10] = 133;
    buf[pos + 11] = 1;
    w.pos = pos + 12;
    w.fixed32(flagsOf(ctx.traceFlags, s.parentSpanContext?.isRemote));
    return;
  }
  w.byte(80);
  w.varint(s.droppedAttributesCount);
  for (const event of s.events) {
    w.byte(90);
    const at = w.open();
    w.byte(9);
    w.hrTime(event.time);
    w.byte(18);
    w.string(event.name);
    if (event.attributes) attributes(w, event.attributes, 26);
    w.byte(32);
    w.varint(event.droppedAttributesCount || 0);
    w.close(at);
  }
  w.byte(96);
  w.varint(s.droppedEventsCount);
  for (const link of s.links) {
    w.byte(106);
    const at = w.open();
    w.byte(10);
    w.hexId(link.context.traceId);
    w.byte(18);
    w.hexId(link.context.spanId);
    const linkState = link.context.traceState?.serialize();
    if (linkState) {
      w.byte(26);
      w.string(linkState);
    }
    if (link.attributes) attributes(w, link.attributes, 34);
    w.byte(40);
    w.varint(link.droppedAttributesCount || 0);
    w.byte(53);
    w.fixed32(flagsOf(link.context.traceFlags, link.context.isRemote));
    w.close(at);
  }
  w.byte(112);
  w.varint(s.droppedLinksCount);
  w.byte(122);
  const status = w.open();
  if (s.status.message) {
    w.byte(18);
    w.string(s.status.message);
  }
  w.byte(24);
  w.varint(s.status.code);
  w.close(status);
  // Field 16 (flags, fixed32): its tag takes two bytes.
  w.byte(133);
  w.byte(1);
  w.fixed32(flagsOf(ctx.traceFlags, s.parentSpanContext?.isRemote));
}

function scope(w: Writer, sc: EncodableSpan['instrumentationScope']): void {
  w.byte(10);
  const at = w.open();
  w.byte(10);
  w.string(sc.name);
  if (sc.version) {
    w.byte(18);
    w.string(sc.version);
  }
  if (sc.attributes) attributes(w, sc.attributes, 26);
  if (sc.droppedAttributesCount) {
    w.byte(32);
    w.varint(sc.droppedAttributesCount);
  }
  w.close(at);
}

/**
 * Spans of one resource and instrumentation scope already encoded, each as
 * `2: Span` of a ScopeSpans (tag, length, span): what EncodingSpanProcessor
 * holds instead of the spans themselves.
 */
export type EncodedSpans = {
  resource: EncodableSpan['resource'];
  instrumentationScope: EncodableSpan['instrumentationScope'];
  bytes: Uint8Array;
  count: number;
};

/** A growing buffer of encoded spans of one resource and scope (see EncodedSpans). */
export class SpanBuffer {
  private w = new Writer(64 * 1024);
  count = 0;
  constructor(
    readonly resource: EncodableSpan['resource'],
    readonly instrumentationScope: EncodableSpan['instrumentationScope'],
  ) {}

  add(s: EncodableSpan): void {
    this.w.byte(18);
    const at = this.w.open();
    span(this.w, s);
    this.w.close(at);
    this.count += 1;
  }

  /** The spans so far; the buffer starts again, empty, in a new one of the size this batch needed. */
  take(): EncodedSpans {
    const bytes = this.w.result();
    const count = this.count;
    this.w = new Writer(this.w.buf.length);
    this.count = 0;
    return { resource: this.resource, instrumentationScope: this.instrumentationScope, bytes, count };
  }
}

function isEncoded(item: EncodableSpan | EncodedSpans): item is EncodedSpans {
  return (item as EncodedSpans).bytes !== undefined;
}

/**
 * Bytes for one export: spans (or spans already encoded) grouped by resource,
 * then by instrumentation scope (by identity).
 */
export function encodeTraceExport(spans: readonly (EncodableSpan | EncodedSpans)[]): Uint8Array {
  const byResource = new Map<
    EncodableSpan['resource'],
    Map<EncodableSpan['instrumentationScope'], (EncodableSpan | EncodedSpans)[]>
  >();
  for (const s of spans) {
    let scopes = byResource.get(s.resource);
    if (!scopes) {
      scopes = new Map();
      byResource.set(s.resource, scopes);
    }
    let list = scopes.get(s.instrumentationScope);
    if (!list) {
      list = [];
      scopes.set(s.instrumentationScope, list);
    }
    list.push(s);
  }
  let size = 1024;
  for (const s of spans) size += isEncoded(s) ? s.bytes.length : 768;
  const w = new Writer(size);
  for (const [resource, scopes] of byResource) {
    w.byte(10);
    const rs = w.open();
    w.byte(10);
    const res = w.open();
    attributes(w, resource.attributes, 10);
    w.byte(16);
    w.byte(0);
    w.close(res);
    for (const list of scopes.values()) {
      const first = list[0] as EncodableSpan | EncodedSpans;
      w.byte(18);
      const ss = w.open();
      scope(w, first.instrumentationScope);
      for (const s of list) {
        if (isEncoded(s)) {
          w.raw(s.bytes);
          continue;
        }
        w.byte(18);
        const at = w.open();
        span(w, s);
        w.close(at);
      }
      if (first.instrumentationScope.schemaUrl) {
        w.byte(26);
        w.string(first.instrumentationScope.schemaUrl);
      }
      w.close(ss);
    }
    if (resource.schemaUrl) {
      w.byte(26);
      w.string(resource.schemaUrl);
    }
    w.close(rs);
  }
  return w.result();
}
