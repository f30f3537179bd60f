import type { Logger } from '@platform/logging';
import type { PrismaClient } from '../generated/prisma/client';
import { deleteExpiredRecords } from './feed-repo';

const DAY_MS = 86_400_000;

/**
 * Removes raw usage records older than `retentionDays`, in batches of
 * `batch` rows with a pause between them (never one table-wide DELETE, so
 * no long lock and no WAL burst), every `everyMs`. The daily sums stay.
 */
export function startUsageRetention(opts: {
  prisma: PrismaClient;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
  pauseMs?: number;
}): { stop(): void; runOnce(): Promise<number> } {
  const batch = opts.batch ?? 5000;
  let stopped = false;
  const runOnce = async () => {
    const before = new Date(opts.clock() - opts.retentionDays * DAY_MS);
    let total = 0;
    while (!stopped) {
      const n = await deleteExpiredRecords(opts.prisma, before, batch);
      total += n;
      if (n < batch) break;
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 200).unref());
    }
    if (total > 0)
      opts.logger.info(
        { deleted: total, before: before.toISOString() },
        'usage records past retention removed',
      );
    return total;
  };
  const timer = setInterval(() => {
    runOnce().catch((err: unknown) =>
      opts.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'usage retention failed; next run retries',
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
