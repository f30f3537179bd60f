import type { Logger } from '@platform/logging';

const DAY_MS = 86_400_000;

export type RetentionSweep = { stop(): void; runOnce(): Promise<number> };

/**
 * Removes rows older than `retentionDays` every `everyMs` (default hourly), in
 * batches of `batch` rows with a pause between them: never one table-wide
 * DELETE, so no long lock and no WAL burst. `purge(before, batch)` deletes at
 * most `batch` rows older than `before` and says how many it deleted. A failed
 * run is logged and the next one retries. Used by the usage records, the audit
 * log and the request log.
 */
export function startRetentionSweep(opts: {
  /** What is removed, for the log lines, e.g. `usage records`. */
  what: string;
  purge: (before: Date, batch: number) => Promise<number>;
  logger: Logger;
  retentionDays: number;
  clock: () => number;
  batch?: number;
  everyMs?: number;
  pauseMs?: number;
}): RetentionSweep {
  const batch = opts.batch ?? 5000;
  let stopped = false;
  const runOnce = async () => {
    const before = new Date(opts.clock() - opts.retentionDays * DAY_MS);
    let total = 0;
    while (!stopped) {
      const n = await opts.purge(before, batch);
      total += n;
      if (n < batch) break;
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 200).unref());
    }
    if (total > 0)
      opts.logger.info(
        { deleted: total, before: before.toISOString() },
        `${opts.what} past retention removed`,
      );
    return total;
  };
  const timer = setInterval(() => {
    runOnce().catch((err: unknown) =>
      opts.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        `${opts.what} retention failed; next run retries`,
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
