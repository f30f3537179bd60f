import type { Logger } from '@platform/logging';
import { Counter, Gauge, type Registry } from '@platform/logging';
import { prismaSql } from '../batching/raw-sql';
import type { PrismaClient } from '../generated/prisma/client';
import type { UsageLedger } from './ledger';
import type { LedgerSpool } from './ledger-spool';
import type { LedgerRecord } from './record';
import { insertLedgerRecords } from './repo';

export type DurableLedgerOptions = {
  /** Where records go normally: the Redis stream, or Postgres in the embedded mode. */
  primary: UsageLedger;
  /** Set when the primary is the Redis stream: a record it refuses goes to Postgres directly. */
  prisma: PrismaClient | null;
  /** The last resort, when neither takes the record (replayed into `replayInto`). */
  spool: LedgerSpool;
  /** Where spooled records are replayed (Postgres). */
  replayInto: PrismaClient;
  logger: Logger;
  registry?: Registry | undefined;
  /** How often the spool is replayed (and other processes' left-overs picked up). */
  replayEveryMs?: number;
};

function fallbackMetrics(registry: Registry | undefined, spool: LedgerSpool) {
  const registers = registry ? [registry] : [];
  const fallbacks = new Counter({
    name: 'usage_ledger_fallback_total',
    help: 'Usage records the primary ledger did not take, by where they went (postgres, spool)',
    labelNames: ['to'] as const,
    registers,
  });
  new Gauge({
    name: 'usage_ledger_spool_bytes',
    help: 'Bytes of usage records in the local spool of this process, waiting for Postgres',
    registers,
    collect() {
      this.set(spool.bytes());
    },
  });
  return fallbacks;
}

/**
 * The ledger with its fallbacks (docs/usage-and-budgets.md, Edges): a record
 * the primary does not take (Redis down or refusing) is inserted into
 * Postgres directly; if that fails too, it is appended to the local spool
 * (fsynced), which is replayed into Postgres every few seconds. Each
 * fallback is logged and counted (`usage_ledger_fallback_total{to}`). Only
 * when the spool refuses too (full, disk gone) does `append` reject, and
 * the answer is then not completed.
 */
export function withLedgerFallbacks(opts: DurableLedgerOptions): UsageLedger {
  const { primary, prisma, spool, logger } = opts;
  const fallbacks = fallbackMetrics(opts.registry, spool);
  const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));
  let replaying: Promise<number> | null = null;
  const replay = () => {
    replaying ??= spool
      .replay((records) => insertLedgerRecords(prismaSql(opts.replayInto), records))
      .then((n) => {
        if (n > 0) logger.info({ records: n }, 'usage records replayed from the local spool');
        return n;
      })
      .finally(() => {
        replaying = null;
      });
    return replaying;
  };
  const timer = setInterval(() => {
    replay().catch(() => {
      // Postgres still down: the spool is kept for the next round.
    });
  }, opts.replayEveryMs ?? 5000);
  timer.unref();

  const toPostgres = async (record: LedgerRecord): Promise<boolean> => {
    if (!prisma) return false;
    try {
      await insertLedgerRecords(prismaSql(prisma), [record]);
      fallbacks.inc({ to: 'postgres' });
      return true;
    } catch (err) {
      logger.error(
        { err: errText(err), request_id: record.requestId },
        'usage record not written to Postgres',
      );
      return false;
    }
  };

  return {
    ...(primary.readiness ? { readiness: primary.readiness } : {}),
    async append(record) {
      try {
        await primary.append(record);
        return;
      } catch (err) {
        logger.warn(
          { err: errText(err), request_id: record.requestId },
          'usage record not appended to the ledger; falling back',
        );
      }
      if (await toPostgres(record)) return;
      await spool.append(record);
      fallbacks.inc({ to: 'spool' });
      logger.error(
        { request_id: record.requestId, spool_bytes: spool.bytes() },
        'usage record spooled to the local file; replayed when Postgres is back',
      );
    },
    async flush(timeoutMs) {
      await replay();
      await primary.flush(timeoutMs);
    },
    async close() {
      clearInterval(timer);
      await replay().catch(() => {});
      await spool.close();
      await primary.close();
    },
  };
}
