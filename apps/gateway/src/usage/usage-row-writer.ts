import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/logging';
import type { UsageEvent, UsageSink } from '../ai/runtime';
import { createBatchWriter } from '../batching/batch-writer';
import type { PrismaClient } from '../generated/prisma/client';
import { insertUsageRows } from './repo';

/** One usage row per AI request (tokens, status, latency), batched into multi-row INSERTs. */
export type UsageRowWriter = UsageSink & {
  /** Writes everything buffered so far (tests, shutdown). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
};

export type UsageRowWriterOptions = {
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
 * Usage recording off the request path. A failed write is retried with the
 * next batch; rows are only lost if the buffer overflows or the process dies.
 */
export function createUsageRowWriter(opts: UsageRowWriterOptions): UsageRowWriter {
  const writer = createBatchWriter<UsageEvent>({
    write: (batch) =>
      insertUsageRows(
        opts.prisma,
        batch.map((e) => ({ ...e, requestId: UUID.test(e.requestId) ? e.requestId : randomUUID() })),
      ),
    maxDelayMs: opts.flushIntervalMs ?? 1000,
    maxBatch: opts.maxBatch ?? 500,
    maxBuffered: opts.maxBuffered ?? 50_000,
    retryFailed: true,
    onFailure: ({ err, items, kind }) => {
      if (kind === 'overflow')
        opts.logger.error({ dropped: items }, 'usage buffer full; oldest rows dropped');
      else opts.logger.error({ err, rows: items }, 'usage rows not written; retrying with the next flush');
    },
  });
  return { record: writer.add, flush: writer.flush, close: writer.close };
}
