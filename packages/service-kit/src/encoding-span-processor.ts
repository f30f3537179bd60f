import { type EncodableSpan, type EncodedSpans, SpanBuffer } from './otlp-protobuf';

type Env = Readonly<Record<string, string | undefined>>;

/** The part of an SDK SpanExporter this processor calls (structural). */
export type EncodedSpansExporter = {
  export(items: EncodedSpans[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
};

export type BatchSettings = {
  maxExportBatchSize: number;
  maxQueueSize: number;
  scheduledDelayMillis: number;
};

/** The standard OTEL_BSP_* variables, with the SDK's defaults (512 spans, 2048, 5 s). */
export function batchSettingsOf(env: Env): BatchSettings {
  const read = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  const maxQueueSize = Math.max(1, read('OTEL_BSP_MAX_QUEUE_SIZE', 2048));
  return {
    maxQueueSize,
    maxExportBatchSize: Math.max(1, Math.min(maxQueueSize, read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512))),
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY', 5000),
  };
}

/**
 * The SDK's batch span processor, except that a span is encoded (OTLP
 * protobuf) the moment it ends and the span object is let go. The SDK's
 * processor keeps every ended span until its batch is sent, up to seconds
 * under light load: at 100 % sampling those span objects, their attribute
 * maps and time arrays live long enough to be promoted to the old generation,
 * and collecting them there cost a loaded gateway more than building them
 * (bench/results/tracing-cost.md). Encoded, a span is a few hundred bytes of
 * one growing buffer that the collector never traces.
 *
 * Same settings and behaviour: OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans make an
 * export at once, OTEL_BSP_SCHEDULE_DELAY after the first waiting span at the
 * latest; past OTEL_BSP_MAX_QUEUE_SIZE waiting (a collector that does not
 * keep up) spans are dropped, never a request blocked. Unsampled spans are
 * ignored.
 */
export class EncodingSpanProcessor {
  private readonly buffers = new Map<EncodableSpan['instrumentationScope'], SpanBuffer>();
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** Spans dropped because the queue was full (tests, diagnostics). */
  dropped = 0;

  constructor(
    private readonly exporter: EncodedSpansExporter,
    private readonly settings: BatchSettings,
  ) {}

  onStart(): void {}

  onEnd(span: EncodableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & 1) === 0) return;
    if (this.waiting >= this.settings.maxQueueSize) {
      this.dropped += 1;
      return;
    }
    let buffer = this.buffers.get(span.instrumentationScope);
    if (!buffer || buffer.resource !== span.resource) {
      if (buffer) this.send();
      buffer = new SpanBuffer(span.resource, span.instrumentationScope);
      this.buffers.set(span.instrumentationScope, buffer);
    }
    buffer.add(span);
    this.waiting += 1;
    if (this.waiting >= this.settings.maxExportBatchSize) this.send();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.send(), this.settings.scheduledDelayMillis);
      this.timer.unref();
    }
  }

  /** Hands what waits to the exporter (its own retries and time-outs apply). */
  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting === 0) return;
    const items: EncodedSpans[] = [];
    for (const buffer of this.buffers.values()) if (buffer.count > 0) items.push(buffer.take());
    this.waiting = 0;
    const sent = new Promise<void>((resolve) => this.exporter.export(items, () => resolve()));
    this.inFlight.add(sent);
    void sent.then(() => this.inFlight.delete(sent));
  }

  async forceFlush(): Promise<void> {
    this.send();
    await Promise.all([...this.inFlight]);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.stopped = true;
    await this.exporter.shutdown();
  }
}
