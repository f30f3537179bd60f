import type { Logger } from '@platform/logging';
import type { PrismaClient } from '../generated/prisma/client';
import { type RetentionSweep, startRetentionSweep } from '../retention/sweep';
import { purgeAuditEvents } from './repo';

/** Removes audit events older than `retentionDays`, in batches, every `everyMs` (AUDIT_RETENTION_DAYS). */
export function startAuditRetention(opts: {
  prisma: PrismaClient;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
}): RetentionSweep {
  return startRetentionSweep({
    ...opts,
    what: 'audit events',
    purge: (before, batch) => purgeAuditEvents(opts.prisma, before, batch),
  });
}
