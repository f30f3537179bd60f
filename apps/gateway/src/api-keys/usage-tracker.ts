import type { Logger } from '@platform/logging';
import type { PrismaClient } from '../generated/prisma/client';
import { writeLastUsed } from './repo';

/**
 * Keeps `api_keys.last_used_at` roughly current without a database write per
 * request: a key is recorded at most once per `resolutionMs`, and recorded
 * keys are written together after `flushDelayMs`, off the request path.
 */
export type UsageTracker = {
  touch(apiKeyId: string, at: Date): void;
  /** Writes everything pending now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
};

export type UsageTrackerOptions = {
  prisma: PrismaClient;
  logger: Logger;
  resolutionMs?: number;
  flushDelayMs?: number;
};

export function createUsageTracker(opts: UsageTrackerOptions): UsageTracker {
  const resolutionMs = opts.resolutionMs ?? 60_000;
  const flushDelayMs = opts.flushDelayMs ?? 5_000;
  const lastRecorded = new Map<string, number>();
  let pending = new Map<string, Date>();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    if (batch.size === 0) return inFlight;
    const entries = [...batch].map(([id, at]) => ({ id, at }));
    inFlight = inFlight
      .then(() => writeLastUsed(opts.prisma, entries))
      .catch((err: unknown) => {
        // Losing a last_used_at update is harmless; failing a request over it is not.
        opts.logger.warn({ err, keys: entries.length }, 'api key last_used_at flush failed');
      });
    return inFlight;
  };

  return {
    touch(apiKeyId, at) {
      const nowMs = at.getTime();
      const last = lastRecorded.get(apiKeyId);
      if (last !== undefined && nowMs - last < resolutionMs) return;
      lastRecorded.set(apiKeyId, nowMs);
      pending.set(apiKeyId, at);
      if (lastRecorded.size > 100_000) lastRecorded.clear();
      if (!timer) {
        timer = setTimeout(() => void flush(), flushDelayMs);
        timer.unref();
      }
    },
    flush,
    close: flush,
  };
}
