import type { Logger } from '@platform/logging';
import { createBatchWriter } from '../batching/batch-writer';
import type { RawSql } from '../batching/raw-sql';
import { lruCache } from '../cache/lru';
import { writeLastUsed } from './api-key-repo';

/**
 * Keeps `api_keys.last_used_at` roughly current without a database write per
 * request: a key is recorded at most once per `resolutionMs`, and recorded
 * keys are written together after `flushDelayMs`, off the request path.
 */
export type LastUsedWriter = {
  /** The key was used at `atMs` (the clock's milliseconds). */
  touch(apiKeyId: string, atMs: number): void;
  /** Writes everything pending now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
};

export type LastUsedWriterOptions = {
  sql: RawSql;
  logger: Logger;
  resolutionMs?: number;
  flushDelayMs?: number;
};

export function createLastUsedWriter(opts: LastUsedWriterOptions): LastUsedWriter {
  const resolutionMs = opts.resolutionMs ?? 60_000;
  // Least recently used keys are forgotten first; a forgotten key is just recorded again.
  const lastRecorded = lruCache<string, number>({ max: 100_000 });
  const writer = createBatchWriter<{ id: string; at: Date }>({
    write: (entries) => writeLastUsed(opts.sql, entries),
    maxDelayMs: opts.flushDelayMs ?? 5_000,
    maxBatch: 1_000,
    maxBuffered: 100_000,
    // Losing a last_used_at update is harmless; failing a request over it is not.
    retryFailed: false,
    onFailure: ({ err, items }) =>
      opts.logger.warn({ err, keys: items }, 'api key last_used_at flush failed'),
  });

  return {
    touch(apiKeyId, atMs) {
      const last = lastRecorded.get(apiKeyId);
      if (last !== undefined && atMs - last < resolutionMs) return;
      lastRecorded.set(apiKeyId, atMs);
      writer.add({ id: apiKeyId, at: new Date(atMs) });
    },
    flush: writer.flush,
    close: writer.close,
  };
}
