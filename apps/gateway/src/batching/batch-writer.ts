/**
 * Collects items in memory and writes them in batches off the request path:
 * `add` only pushes to an array; a timer (at most `maxDelayMs` after the first
 * waiting item) or a full batch starts a write. Writes are chained, so two
 * flushes never send the same items twice.
 */
export type BatchWriter<T> = {
  add(item: T): void;
  /** Writes everything waiting now (tests, shutdown). */
  flush(): Promise<void>;
  /** Refuses further items and writes what is left. */
  close(): Promise<void>;
};

export type BatchWriterOptions<T> = {
  /** Writes one batch, e.g. one multi-row statement. */
  write(batch: T[]): Promise<void>;
  /** Longest time an item waits in memory. */
  maxDelayMs: number;
  /** A batch of this size is written at once; larger backlogs go out in batches of this size. */
  maxBatch: number;
  /** Beyond this many waiting items (database down) the oldest are dropped, so memory stays bounded. */
  maxBuffered: number;
  /** true: a failed batch goes back to the front and is retried with the next flush; false: it is dropped. */
  retryFailed: boolean;
  /** Told about every failed write and every overflow; the writer itself never throws at callers. */
  onFailure(event: { err?: unknown; items: number; kind: 'write_failed' | 'overflow' }): void;
};

export function createBatchWriter<T>(opts: BatchWriterOptions<T>): BatchWriter<T> {
  let buffer: T[] = [];
  let writing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const schedule = (): void => {
    if (timer || closed || buffer.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, opts.maxDelayMs);
    timer.unref();
  };

  const writeWaiting = async (): Promise<void> => {
    // Only the items present when this flush began: items that arrive while it
    // writes wait for the next one, so under load batches grow instead of the
    // writer degenerating into one small write after another.
    let pending = buffer.length;
    while (pending > 0) {
      const batch = buffer.splice(0, Math.min(opts.maxBatch, pending));
      pending -= batch.length;
      try {
        await opts.write(batch);
      } catch (err) {
        if (opts.retryFailed) buffer = batch.concat(buffer).slice(0, opts.maxBuffered);
        opts.onFailure({ err, items: batch.length, kind: 'write_failed' });
        if (opts.retryFailed) return;
      }
    }
  };

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    writing = writing.then(writeWaiting).finally(schedule);
    return writing;
  };

  return {
    add(item) {
      if (closed) return;
      buffer.push(item);
      if (buffer.length > opts.maxBuffered) {
        const dropped = buffer.length - opts.maxBuffered;
        buffer = buffer.slice(dropped);
        opts.onFailure({ items: dropped, kind: 'overflow' });
      }
      if (buffer.length === opts.maxBatch) void flush();
      else schedule();
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
  };
}
