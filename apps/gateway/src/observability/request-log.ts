import type { Logger } from '@platform/logging';
import { createBatchWriter } from '../batching/batch-writer';
import type { RawSql } from '../batching/raw-sql';
import { type RetentionSweep, startRetentionSweep } from '../retention/sweep';
import type { LedgerRecord } from '../usage/record';
import { type AttemptLog, firstTokenMs } from './attempt-log';
import type { CapturedContent, ProjectCapture } from './capture';
import { deleteExpiredRequestLog, insertRequestLog, type RequestLogRow } from './request-log-repo';

/**
 * The request log (docs/observability.md): one row per AI request with its
 * attempts, written in batches off the request path like the other batch
 * writers. Losing rows when Postgres is down for long is accepted (the
 * ledger, not this log, is what money depends on): the buffer is bounded and
 * its oldest rows go first.
 */
export type RequestLog = {
  /** The request ended with this ledger record; its attempts, client, error and captured content beside it. */
  record(record: LedgerRecord, attempts: AttemptLog, extra: RequestLogExtra): void;
  /** The owner's projects whose prompts and answers are kept (cached; see ProjectCapture). */
  capturedProjects(ownerUserId: string): Promise<ReadonlySet<string>>;
  flush(): Promise<void>;
  close(): Promise<void>;
};

/** What the frame knows of a request beside its ledger record. */
export type RequestLogExtra = {
  userAgent?: string | undefined;
  error?: string | undefined;
  /** Only for a project that captures content; absent otherwise (nothing is built or written then). */
  content?: CapturedContent | undefined;
};

const MAX_USER_AGENT = 256;

export function toRequestLogRow(
  record: LedgerRecord,
  attempts: AttemptLog,
  extra: RequestLogExtra,
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
    // Left undefined (not null) when nothing was captured: JSON.stringify then writes no key at all.
    prompt: extra.content?.prompt,
    answer: extra.content?.answer,
    createdAt: new Date(record.createdAt),
  };
}

export function createRequestLog(opts: {
  /** The batched insert's runner (batching/raw-sql.ts). */
  sql: RawSql;
  logger: Logger;
  capture: ProjectCapture;
  flushDelayMs?: number;
}): RequestLog {
  const writer = createBatchWriter<RequestLogRow>({
    write: (rows) =>
      insertRequestLog(opts.sql, rows, (err) =>
        opts.logger.warn(
          { err: err instanceof Error ? err.message : String(err), rows: rows.length },
          'request log COPY refused; rows written by statement',
        ),
      ),
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
    capturedProjects: opts.capture.capturedProjects,
    flush: writer.flush,
    close: writer.close,
  };
}

/** Removes request-log rows older than `retentionDays`, in batches, every `everyMs` (like usage retention). */
export function startRequestLogRetention(opts: {
  sql: RawSql;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
}): RetentionSweep {
  return startRetentionSweep({
    ...opts,
    what: 'request log rows',
    purge: (before, batch) => deleteExpiredRequestLog(opts.sql, before, batch),
  });
}
