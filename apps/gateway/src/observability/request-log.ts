import type { Logger } from '@platform/logging';
import { createBatchWriter } from '../batching/batch-writer';
import type { PrismaClient } from '../generated/prisma/client';
import { type RetentionSweep, startRetentionSweep } from '../retention/sweep';
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

/** Removes request-log rows older than `retentionDays`, in batches, every `everyMs` (like usage retention). */
export function startRequestLogRetention(opts: {
  prisma: PrismaClient;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
}): RetentionSweep {
  return startRetentionSweep({
    ...opts,
    what: 'request log rows',
    purge: (before, batch) => deleteExpiredRequestLog(opts.prisma, before, batch),
  });
}
