import type { Logger } from '@platform/logging';
import { createBatchWriter } from '../batching/batch-writer';
import type { PrismaClient } from '../generated/prisma/client';
import type { LedgerRecord } from '../usage/record';
import { type AttemptLog, firstTokenMs } from './attempt-log';
import { deleteExpiredRequestLog, insertRequestLog, type RequestLogRow } from './request-log-repo';

/**
 * The request log (docs/observability.md): one row per AI request with its
 * attempts, written in batches off the request path like the other batch
 * writers. Losing rows when Postgres is down for long is accepted (the
 * ledger, not this log, is what money depends on): the buffer is bounded and
 * its oldest rows go first.
 */
export type RequestLog = {
  /** The request ended with this ledger record; its attempts, client and error beside it. */
  record(
    record: LedgerRecord,
    attempts: AttemptLog,
    extra: { userAgent?: string | undefined; error?: string | undefined },
  ): void;
  flush(): Promise<void>;
  close(): Promise<void>;
};

const MAX_USER_AGENT = 256;

export function toRequestLogRow(
  record: LedgerRecord,
  attempts: AttemptLog,
  extra: { userAgent?: string | undefined; error?: string | undefined },
): RequestLogRow {
  return {
    requestId: record.requestId,
    userId: record.userId,
    apiKeyId: record.apiKeyId,
    projectId: record.projectId,
    endpoint: record.endpoint,
    lane: record.lane,
    provider: record.provider,
    model: record.model,
    status: record.status,
    promptTokens: record.promptTokens,
    completionTokens: record.completionTokens,
    cachedTokens: record.cachedTokens,
    costMicros: record.costMicros,
    currency: record.currency,
    latencyMs: record.latencyMs,
    ttftMs: firstTokenMs(attempts, record.endpoint),
    userAgent: extra.userAgent ? extra.userAgent.slice(0, MAX_USER_AGENT) : null,
    error: extra.error ?? null,
    attempts: attempts.attempts,
    createdAt: new Date(record.createdAt),
  };
}

export function createRequestLog(opts: {
  prisma: PrismaClient;
  logger: Logger;
  flushDelayMs?: number;
}): RequestLog {
  const writer = createBatchWriter<RequestLogRow>({
    write: (rows) => insertRequestLog(opts.prisma, rows),
    maxDelayMs: opts.flushDelayMs ?? 1_000,
    maxBatch: 500,
    maxBuffered: 20_000,
    retryFailed: true,
    onFailure: ({ err, items, kind }) =>
      opts.logger.warn(
        { err: err instanceof Error ? err.message : err, rows: items, kind },
        kind === 'overflow' ? 'request log rows dropped: buffer full' : 'request log write failed; retried',
      ),
  });
  return {
    record: (record, attempts, extra) => writer.add(toRequestLogRow(record, attempts, extra)),
    flush: writer.flush,
    close: writer.close,
  };
}

const DAY_MS = 86_400_000;

/** Removes request-log rows older than `retentionDays`, in batches, every `everyMs` (like usage retention). */
export function startRequestLogRetention(opts: {
  prisma: PrismaClient;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
}): { stop(): void; runOnce(): Promise<number> } {
  const batch = opts.batch ?? 5000;
  let stopped = false;
  const runOnce = async () => {
    const before = new Date(opts.clock() - opts.retentionDays * DAY_MS);
    let total = 0;
    while (!stopped) {
      const n = await deleteExpiredRequestLog(opts.prisma, before, batch);
      total += n;
      if (n < batch) break;
      await new Promise((r) => setTimeout(r, 200).unref());
    }
    if (total > 0) opts.logger.info({ deleted: total }, 'request log rows past retention removed');
    return total;
  };
  const timer = setInterval(() => {
    runOnce().catch((err: unknown) =>
      opts.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'request log retention failed',
      ),
    );
  }, opts.everyMs ?? 3_600_000);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
    runOnce,
  };
}
