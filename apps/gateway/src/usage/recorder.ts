import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/logging';
import type { UsageEvent, UsageSink } from '../ai/runtime';
import type { PrismaClient } from '../generated/prisma/client';
import { insertUsageRows } from './repo';

/** Batches usage rows in memory and writes them with one multi-row INSERT per batch. */
export type UsageRecorder = UsageSink & {
  /** Writes everything buffered so far (tests, shutdown). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
};

export type UsageRecorderOptions = {
  prisma: PrismaClient;
  logger: Logger;
  /** Longest time a row waits in memory. */
  flushIntervalMs?: number;
  /** A batch of this size is written at once. */
  maxBatch?: number;
  /** Beyond this many buffered rows (database down) the oldest are dropped, so memory stays bounded. */
  maxBuffered?: number;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Usage recording off the request path: `record` only pushes to an array; a
 * timer (or a full batch) writes rows in bulk. A failed write is retried with
 * the next batch; rows are only lost if the buffer overflows or the process dies.
 */
export function createUsageRecorder(opts: UsageRecorderOptions): UsageRecorder {
  const maxBatch = opts.maxBatch ?? 500;
  const maxBuffered = opts.maxBuffered ?? 50_000;
  let buffer: UsageEvent[] = [];
  let writing: Promise<void> = Promise.resolve();
  let closed = false;

  const writeBatch = async (): Promise<void> => {
    // Only the rows present when this flush began: rows that arrive while it
    // writes wait for the next tick, so under load batches grow instead of the
    // writer degenerating into one small INSERT after another.
    let pending = buffer.length;
    while (pending > 0) {
      const batch = buffer.splice(0, Math.min(maxBatch, pending));
      pending -= batch.length;
      try {
        await insertUsageRows(
          opts.prisma,
          batch.map((e) => ({ ...e, requestId: UUID.test(e.requestId) ? e.requestId : randomUUID() })),
        );
      } catch (err) {
        // Back to the front, so the rows go out with the next flush.
        buffer = batch.concat(buffer).slice(0, maxBuffered);
        opts.logger.error(
          { err, rows: batch.length },
          'usage rows not written; retrying with the next flush',
        );
        return;
      }
    }
  };

  // Writes are chained so two flushes never send the same rows twice.
  const flush = (): Promise<void> => {
    writing = writing.then(writeBatch);
    return writing;
  };

  const timer = setInterval(() => void flush(), opts.flushIntervalMs ?? 1000);
  timer.unref();

  return {
    record(event) {
      if (closed) return;
      buffer.push(event);
      if (buffer.length > maxBuffered) {
        const dropped = buffer.length - maxBuffered;
        buffer = buffer.slice(dropped);
        opts.logger.error({ dropped }, 'usage buffer full; oldest rows dropped');
      }
      if (buffer.length === maxBatch) void flush();
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}
