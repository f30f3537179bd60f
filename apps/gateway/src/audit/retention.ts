import type { Logger } from '@platform/logging';
import type { RawSql } from '../batching/raw-sql';
import { type RetentionSweep, startRetentionSweep } from '../retention/sweep';
import { purgeAuditEvents } from './repo';

/** Removes audit events older than `retentionDays`, in batches, every `everyMs` (AUDIT_RETENTION_DAYS). */
export function startAuditRetention(opts: {
  sql: RawSql;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
}): RetentionSweep {
  return startRetentionSweep({
    ...opts,
    what: 'audit events',
    purge: (before, batch) => purgeAuditEvents(opts.sql, before, batch),
  });
}
