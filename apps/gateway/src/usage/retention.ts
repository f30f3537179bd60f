import type { Logger } from '@platform/logging';
import type { RawSql } from '../batching/raw-sql';
import { type RetentionSweep, startRetentionSweep } from '../retention/sweep';
import { deleteExpiredRecords } from './feed-repo';

/**
 * Removes raw usage records older than `retentionDays`, in batches of
 * `batch` rows with a pause between them (never one table-wide DELETE, so
 * no long lock and no WAL burst), every `everyMs`. The daily sums stay.
 */
export function startUsageRetention(opts: {
  sql: RawSql;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
  pauseMs?: number;
}): RetentionSweep {
  return startRetentionSweep({
    ...opts,
    what: 'usage records',
    purge: (before, batch) => deleteExpiredRecords(opts.sql, before, batch),
  });
}
