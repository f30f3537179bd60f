import { randomUUID } from 'node:crypto';
import type { UsageEvent } from '@platform/contract';
import type { Logger } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { type BillableRow, type BillingRules, type SkipReason, usageEventOf } from './events';
import type { ShipperMetrics } from './metrics';

/** A position in the usage feed (see usage/feed-repo.ts): after the row (xid, seq). */
export type FeedPosition = { xid: bigint; seq: bigint };

/** Reads the ledger after a position, in feed order. */
export type FeedReader = (
  after: FeedPosition,
  limit: number,
) => Promise<{ rows: BillableRow[]; last: FeedPosition | null }>;

/**
 * The shipper's persisted cursor with a lease: only the holder of the lease
 * may advance it, so one shipper ships at a time across workers and replicas.
 */
export type CursorStore = {
  /** Takes (or renews) the lease; the cursor when held, null when another owner holds it. */
  acquire(owner: string, leaseMs: number): Promise<FeedPosition | null>;
  /** Moves the cursor and renews the lease; false when the lease was lost (nothing written). */
  advance(owner: string, to: FeedPosition, leaseMs: number): Promise<boolean>;
  /** Gives the lease up (shutdown), so another process takes over at once. */
  release(owner: string): Promise<void>;
};

/** The one payment call the shipper makes (`@platform/client`'s payment client fits). */
export type UsageSink = {
  recordUsageEvents(
    request: { events: UsageEvent[] },
    options?: { signal?: AbortSignal },
  ): Promise<{
    stored: number;
    duplicates: number;
    conflicts: number;
    /** Absent from a payment that predates per-event refusals. */
    refused?: number;
    results: { id: string; outcome: string; reason?: string; message?: string }[];
  }>;
};

export type ShipperOptions = {
  rules: BillingRules;
  feed: FeedReader;
  cursor: CursorStore;
  payment: UsageSink;
  logger: Logger;
  clock: Clock;
  metrics: ShipperMetrics;
  /** Ledger records read per round; a round sends at most one payment batch. */
  batchSize: number;
  /** Pause when the feed is drained, or while another process holds the lease. */
  idleMs: number;
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  random?: () => number;
};

/** What readiness details and tests see of one shipper. */
export type ShipperStatus = {
  /** This process holds the lease (it is the one shipping). */
  active: boolean;
  lastShippedAt: string | null;
  lastFailure: { at: string; message: string } | null;
  consecutiveFailures: number;
  /** Age of the oldest record not yet acknowledged by payment, seconds (0 when caught up). */
  lagSeconds: number;
};

export type UsageShipper = {
  start(): void;
  /** Stops after the round in flight, and releases the lease. */
  stop(): Promise<void>;
  status(): ShipperStatus;
  /** One round, for tests: true when it shipped or skipped something. */
  runOnce(): Promise<boolean>;
};

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Ships the usage ledger to payment's `POST /api/v1/usage-events`, at least
 * once: read the records after the persisted cursor, turn them into usage
 * events (event id = ledger record id, so payment's outbox and Stripe's
 * `identifier` drop a repeat), send them, and advance the cursor only after
 * payment acknowledged the batch. A crash between the send and the advance
 * resends the batch, which payment answers as `duplicate`.
 *
 * Runs in the background of every gateway process; a Postgres lease on the
 * cursor row lets one of them ship at a time. A failure (payment down, 5xx,
 * timeout, Postgres down) backs off exponentially with jitter up to
 * `retryMaxMs` and retries the same batch; nothing here is on a user's
 * request path.
 *
 * Over 80 lines: its closures share one cursor, one timer and the batch in flight; each is short and named.
 */
export function createUsageShipper(opts: ShipperOptions): UsageShipper {
  const owner = `${process.pid}-${randomUUID()}`;
  const random = opts.random ?? Math.random;
  const log = opts.logger;
  let active = false;
  let running = false;
  let stopping = false;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  const abort = new AbortController();
  const state: ShipperStatus = {
    active: false,
    lastShippedAt: null,
    lastFailure: null,
    consecutiveFailures: 0,
    lagSeconds: 0,
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  function setLag(oldest: BillableRow | undefined): void {
    const lag = oldest ? Math.max(0, (opts.clock() - Date.parse(oldest.created_at)) / 1000) : 0;
    state.lagSeconds = lag;
    opts.metrics.lagSeconds.set(lag);
  }

  /**
   * Events payment refused (unknown meter, timestamp out of range, invalid) are
   * parked there for an operator (docs/billing.md, "Refused events"); the cursor
   * moves past them like past the rest, so one bad record never stops billing.
   */
  function noteRefused(results: Awaited<ReturnType<UsageSink['recordUsageEvents']>>['results']): void {
    const refused = results.filter((r) => r.outcome === 'refused');
    if (refused.length === 0) return;
    const byReason = new Map<string, number>();
    for (const r of refused)
      byReason.set(r.reason ?? 'unknown', (byReason.get(r.reason ?? 'unknown') ?? 0) + 1);
    for (const [reason, n] of byReason) opts.metrics.refused.inc({ reason }, n);
    log.error(
      {
        refused: refused.length,
        events: refused.slice(0, 20).map((r) => ({ id: r.id, reason: r.reason, message: r.message })),
      },
      'payment refused usage events; parked there, cursor moves on',
    );
  }

  async function round(): Promise<boolean> {
    const at = await opts.cursor.acquire(owner, opts.leaseMs);
    if (!at) {
      if (active) log.info('usage shipper lease taken by another process');
      active = false;
      state.active = false;
      opts.metrics.active.set(0);
      return false;
    }
    if (!active) log.info('usage shipper holds the lease');
    active = true;
    state.active = true;
    opts.metrics.active.set(1);

    const { rows, last } = await opts.feed(at, opts.batchSize);
    setLag(rows[0]);
    if (!last || rows.length === 0) return false;

    const events: UsageEvent[] = [];
    const skipped = new Map<SkipReason, number>();
    for (const row of rows) {
      const out = usageEventOf(opts.rules, row);
      if (out.event) events.push(out.event);
      else skipped.set(out.skip, (skipped.get(out.skip) ?? 0) + 1);
    }
    if (events.length > 0) {
      const answer = await opts.payment.recordUsageEvents({ events }, { signal: abort.signal });
      if (answer.conflicts > 0) {
        // Two different usages under one id: a bug, never silently "fixed". The stored one stands.
        const ids = answer.results.filter((r) => r.outcome === 'conflict').map((r) => r.id);
        log.error(
          { conflicts: answer.conflicts, ids: ids.slice(0, 20) },
          'payment refused usage events as conflicts',
        );
        opts.metrics.conflicts.inc(answer.conflicts);
      }
      noteRefused(answer.results);
      opts.metrics.events.inc({ outcome: 'stored' }, answer.stored);
      opts.metrics.events.inc({ outcome: 'duplicate' }, answer.duplicates);
    }
    for (const [reason, n] of skipped) {
      opts.metrics.skipped.inc({ reason }, n);
      if (reason === 'too_large')
        log.error({ records: n }, 'usage records above the meter value limit not billed');
    }

    if (!(await opts.cursor.advance(owner, last, opts.leaseMs))) {
      // Another process took the lease meanwhile (we were paused past it): it resends from
      // the old cursor, which payment answers as duplicates. Nothing is lost or doubled.
      log.warn('usage shipper lost its lease before advancing the cursor');
      active = false;
      state.active = false;
      opts.metrics.active.set(0);
      return false;
    }
    state.lastShippedAt = new Date(opts.clock()).toISOString();
    opts.metrics.lastShipped.set(opts.clock() / 1000);
    return true;
  }

  async function run(): Promise<void> {
    while (!stopping) {
      let delay = opts.idleMs;
      try {
        const more = await round();
        state.consecutiveFailures = 0;
        if (more) delay = 0;
      } catch (err) {
        if (stopping) break;
        state.consecutiveFailures += 1;
        const message = messageOf(err);
        state.lastFailure = { at: new Date(opts.clock()).toISOString(), message };
        opts.metrics.failures.inc();
        const ceiling = Math.min(
          opts.retryMaxMs,
          opts.retryBaseMs * 2 ** Math.min(state.consecutiveFailures - 1, 20),
        );
        delay = Math.round(ceiling / 2 + (random() * ceiling) / 2);
        log.warn(
          { err: message, retry_in_ms: delay, failures: state.consecutiveFailures },
          'usage shipping failed; retrying',
        );
      }
      if (delay > 0 && !stopping) await sleep(delay);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      stopping = true;
      abort.abort(new Error('usage shipper stopping'));
      wake?.();
      await loop;
      if (active) await opts.cursor.release(owner).catch(() => {});
      active = false;
      state.active = false;
      opts.metrics.active.set(0);
    },
    status: () => ({ ...state }),
    runOnce: round,
  };
}
