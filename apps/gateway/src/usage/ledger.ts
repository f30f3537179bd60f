import type { ReadinessCheck } from '@platform/service-kit';
import type { LedgerRecord } from './record';

/**
 * The usage ledger's write side. `append` resolves once the record is durable
 * (in the Redis stream, or committed in Postgres): callers await it before
 * the response's last byte, so every answer a client received has its record
 * whatever happens to this process afterwards. Two adapters: a Redis stream
 * drained into Postgres (ledger-redis-stream.ts) and a direct Postgres write
 * (ledger-postgres.ts, the embedded mode).
 */
export type UsageLedger = {
  append(record: LedgerRecord): Promise<void>;
  /** Resolves when every record appended so far is in Postgres (tests, operators). */
  flush(timeoutMs?: number): Promise<void>;
  /** How /health/ready sees the ledger (a drain that stopped advancing), when it has background work. */
  readiness?: ReadinessCheck;
  /** Stops background work; what is not yet in Postgres stays durable for the next start. */
  close(): Promise<void>;
};
