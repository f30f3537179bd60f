import { Counter, Gauge, type Registry } from '@platform/logging';
import type { ReadinessCheck } from '@platform/service-kit';

/** What the drain tells its health, and what the health shows (/metrics, /health/ready). */
export type LedgerHealth = {
  /** Records refused by Postgres were parked (usage_parked). */
  parked(n: number): void;
  /**
   * `usage_ledger` on /health/ready: down while the stream has a backlog
   * whose oldest entry has not changed for `stallMs` (no consumer of any
   * process is writing it: Postgres refusing, a bug, a lost consumer group).
   * Seen at each probe or scrape. Details: backlog, seconds since advance.
   */
  readiness: ReadinessCheck;
};

export type LedgerHealthOptions = {
  /** Entries waiting in the stream (XLEN: drained entries are deleted), and the id of the oldest. */
  backlog(): Promise<{ entries: number; oldest: string | null }>;
  registry?: Registry | undefined;
  now?: () => number;
  /** A drain with a backlog that has not advanced for this long is stalled (default a minute). */
  stallMs?: number;
};

/** One per ledger (its metrics registered once on the app's registry). */
export function createLedgerHealth(opts: LedgerHealthOptions): LedgerHealth {
  const now = opts.now ?? Date.now;
  const stallMs = opts.stallMs ?? 60_000;
  // The oldest entry seen and since when: the drain advances when it changes (written entries are deleted).
  let seen: { oldest: string | null; since: number } = { oldest: null, since: now() };
  const registers = opts.registry ? [opts.registry] : [];
  const state = async () => {
    const { entries, oldest } = await opts.backlog();
    if (oldest !== seen.oldest) seen = { oldest, since: now() };
    const sinceAdvance = entries > 0 ? Math.max(0, now() - seen.since) : 0;
    return { backlog: entries, sinceAdvance, stalled: entries > 0 && sinceAdvance >= stallMs };
  };
  const parked = new Counter({
    name: 'usage_ledger_parked_total',
    help: 'Ledger records Postgres refused, parked in usage_parked for an operator',
    registers,
  });
  new Gauge({
    name: 'usage_ledger_backlog_entries',
    help: 'Entries waiting in the ledger stream for the drain',
    registers,
    async collect() {
      this.set((await state()).backlog);
    },
  });
  new Gauge({
    name: 'usage_ledger_drain_stalled',
    help: '1 while the ledger stream has a backlog whose oldest entry has not been written for a minute',
    registers,
    async collect() {
      this.set((await state()).stalled ? 1 : 0);
    },
  });
  return {
    parked(n) {
      parked.inc(n);
    },
    readiness: {
      name: 'usage_ledger',
      required: true,
      check: async () => !(await state()).stalled,
      details: async () => {
        const s = await state();
        return { backlog: s.backlog, seconds_since_advance: Math.floor(s.sinceAdvance / 1000) };
      },
    },
  };
}
