import type { Logger } from '@platform/logging';
import type { PrismaClient } from '../generated/prisma/client';
import { purgeAuditEvents } from './repo';

const DAY_MS = 86_400_000;

/** Removes audit events older than `retentionDays`, in batches, every `everyMs` (AUDIT_RETENTION_DAYS). */
export function startAuditRetention(opts: {
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
      const n = await purgeAuditEvents(opts.prisma, before, batch);
      total += n;
      if (n < batch) break;
    }
    if (total > 0)
      opts.logger.info(
        { deleted: total, before: before.toISOString() },
        'audit events past retention removed',
      );
    return total;
  };
  const timer = setInterval(() => {
    runOnce().catch((err: unknown) =>
      opts.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'audit retention failed; next run retries',
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
