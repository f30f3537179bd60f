import type { Logger } from '@platform/logging';
import { createBatchWriter } from '../batching/batch-writer';
import type { PrismaClient } from '../generated/prisma/client';
import { writeLastUsed } from './repo';

/**
 * Keeps `api_keys.last_used_at` roughly current without a database write per
 * request: a key is recorded at most once per `resolutionMs`, and recorded
 * keys are written together after `flushDelayMs`, off the request path.
 */
export type LastUsedWriter = {
  touch(apiKeyId: string, at: Date): void;
  /** Writes everything pending now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
};

export type LastUsedWriterOptions = {
  prisma: PrismaClient;
  logger: Logger;
  resolutionMs?: number;
  flushDelayMs?: number;
};

export function createLastUsedWriter(opts: LastUsedWriterOptions): LastUsedWriter {
  const resolutionMs = opts.resolutionMs ?? 60_000;
  const lastRecorded = new Map<string, number>();
  const writer = createBatchWriter<{ id: string; at: Date }>({
    write: (entries) => writeLastUsed(opts.prisma, entries),
    maxDelayMs: opts.flushDelayMs ?? 5_000,
    maxBatch: 1_000,
    maxBuffered: 100_000,
    // Losing a last_used_at update is harmless; failing a request over it is not.
    retryFailed: false,
    onFailure: ({ err, items }) =>
      opts.logger.warn({ err, keys: items }, 'api key last_used_at flush failed'),
  });

  return {
    touch(apiKeyId, at) {
      const nowMs = at.getTime();
      const last = lastRecorded.get(apiKeyId);
      if (last !== undefined && nowMs - last < resolutionMs) return;
      lastRecorded.set(apiKeyId, nowMs);
      if (lastRecorded.size > 100_000) lastRecorded.clear();
      writer.add({ id: apiKeyId, at });
    },
    flush: writer.flush,
    close: writer.close,
  };
}
