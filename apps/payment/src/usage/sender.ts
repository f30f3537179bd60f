import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/logging';
import { type Clock, systemClock } from '@platform/service-kit';
import type Stripe from 'stripe';
import type { PaymentEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import { type BillingItem, placeEvent } from './billing-home';
import { createMeterDirectory, type MeterDirectory } from './meter-directory';
import { readMeterConfig } from './meters';
import type { UsageMetrics } from './metrics';
import {
  type ClaimedEvent,
  claimDueEvents,
  findBillingItems,
  markAttempted,
  markFailed,
  markHeld,
  markSent,
  releaseEvents,
} from './repo';
import { checkAtStripe, needsResendCheck } from './resend-check';
import { classifySendFailure, retryDelayMs, type SendFailure } from './send-failure';

export type SenderDeps = {
  prisma: PrismaClient;
  stripe: Stripe;
  logger: Logger;
  /** The service clock (deps.ts); customers are created and forgotten with it. */
  now: () => Date;
  /**
   * The time the sender's own waits are measured on (pacing, pauses, the
   * lease); real time (`systemClock`) unless a test passes its own.
   */
  clock?: Clock;
  metrics: UsageMetrics;
  env: Pick<
    PaymentEnv,
    | 'PAYMENT_USAGE_SENDER_BATCH'
    | 'PAYMENT_USAGE_SENDER_IDLE_MS'
    | 'PAYMENT_USAGE_SENDER_RATE_PER_SECOND'
    | 'PAYMENT_USAGE_SENDER_CONCURRENCY'
    | 'PAYMENT_USAGE_SENDER_LEASE_SECONDS'
    | 'PAYMENT_USAGE_RETRY_BASE_MS'
    | 'PAYMENT_USAGE_RETRY_MAX_MS'
    | 'PAYMENT_USAGE_INVOICE_GRACE_SECONDS'
    | 'PAYMENT_USAGE_METERS'
    | 'PAYMENT_USAGE_DEFAULT_METER'
    | 'PAYMENT_USAGE_METER_CURRENCIES'
  >;
  /** Stripe's meters by event name; built from `stripe` when absent. */
  meterDirectory?: MeterDirectory;
};

/** What readiness shows of this process's sender. */
export type SenderStatus = {
  running: boolean;
  lastSentAt: string | null;
  lastFailure: { at: string; kind: string; message: string } | null;
  pausedUntil: string | null;
};

export type UsageSender = { stop(): Promise<void>; status(): SenderStatus };

/** Spaces calls so one process stays under `perSecond`. */
function createPacer(perSecond: number, clock: Clock) {
  const gap = 1000 / perSecond;
  let next = 0;
  return async (): Promise<void> => {
    const now = clock();
    const at = Math.max(now, next);
    next = at + gap;
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  };
}

/** The Stripe idempotency key of one event's call: a retry within 24 h replays the first answer. */
export function meterEventIdempotencyKey(eventId: string): string {
  return `meter-event:${eventId}`;
}

/**
 * Starts draining the usage outbox to Stripe Billing Meters in this process
 * (docs/billing.md). Each round claims due rows under a lease, sends each
 * customer+meter group one call at a time (groups in parallel up to the
 * concurrency), and marks each row sent once Stripe acknowledged it, so a
 * crash re-sends at most the rows in flight, which Stripe answers from its
 * idempotency cache (same key) or drops by `identifier`. A 429, 5xx or network
 * failure puts the row back with backoff and pauses the whole sender until
 * then; a 400 marks the row `failed`. `stop()` lets the calls in flight end,
 * hands the unsent claimed rows back and resolves.
 *
 * Over 80 lines: the claim loop, the lease and the pause share their timers and state.
 */
export function startUsageSender(deps: SenderDeps): UsageSender {
  const { env, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const token = randomUUID();
  const pace = createPacer(env.PAYMENT_USAGE_SENDER_RATE_PER_SECOND, clock);
  const meters = readMeterConfig(env);
  const directory = deps.meterDirectory ?? createMeterDirectory(deps.stripe, undefined, clock);
  const graceMs = env.PAYMENT_USAGE_INVOICE_GRACE_SECONDS * 1000;
  let stopping = false;
  let wake: (() => void) | undefined;
  let pausedUntil = 0;
  const state: SenderStatus = { running: true, lastSentAt: null, lastFailure: null, pausedUntil: null };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const noteFailure = (failure: SendFailure) => {
    deps.metrics.failed(failure.kind);
    state.lastFailure = { at: new Date().toISOString(), kind: failure.kind, message: failure.message };
  };

  async function sendOne(row: ClaimedEvent, customerId: string): Promise<SendFailure | undefined> {
    await pace();
    try {
      await deps.stripe.billing.meterEvents.create(
        {
          event_name: row.eventName,
          identifier: row.id,
          timestamp: Math.floor(row.occurredAt.getTime() / 1000),
          payload: { stripe_customer_id: customerId, value: String(row.value) },
        },
        { idempotencyKey: meterEventIdempotencyKey(row.id), maxNetworkRetries: 0 },
      );
    } catch (err) {
      const failure = classifySendFailure(err);
      if (!failure.delivered) return failure;
      logger.info({ eventId: row.id }, 'stripe already had this usage event; marked sent');
    }
    await markSent(deps.prisma, row.id, customerId);
    deps.metrics.sent();
    state.lastSentAt = new Date().toISOString();
    return undefined;
  }

  /**
   * Where each row of one user+meter group lands (billing-home.ts): rows no
   * invoice would carry are held (`unbillable`, `late`) and never sent; the
   * rest go out with the subscription's customer. Null after a failure that
   * put the group back.
   */
  async function placeGroup(
    rows: ClaimedEvent[],
  ): Promise<{ send: Array<[ClaimedEvent, BillingItem]>; meterId: string } | null> {
    const [first] = rows;
    if (!first) return null;
    let items: BillingItem[];
    let meterId: string | undefined;
    try {
      meterId = await directory.idOf(first.eventName);
      if (meterId === undefined) {
        const message = `No active meter was found for event_name '${first.eventName}'.`;
        noteFailure({ kind: 'refused', retry: false, message });
        for (const row of rows) await markFailed(deps.prisma, row.id, token, message);
        return null;
      }
      items = await findBillingItems(deps.prisma, first.userId, meterId);
    } catch (err) {
      await holdBack(rows, classifySendFailure(err), first);
      return null;
    }
    const now = deps.now();
    const rules = { graceMs: graceMs, currency: meters?.currencies.get(first.meter) };
    const send: Array<[ClaimedEvent, BillingItem]> = [];
    const held = { unbillable: new Map<string, string[]>(), late: new Map<string, string[]>() };
    for (const row of rows) {
      const placed = placeEvent(items, row.occurredAt, now, rules, first.meter);
      if (placed.kind === 'send') send.push([row, placed.item]);
      else held[placed.kind].set(placed.reason, [...(held[placed.kind].get(placed.reason) ?? []), row.id]);
    }
    for (const status of ['unbillable', 'late'] as const) {
      for (const [reason, ids] of held[status]) {
        await markHeld(deps.prisma, { ids, token, status, reason });
        const value = rows.filter((r) => ids.includes(r.id)).reduce((sum, r) => sum + r.value, 0);
        deps.metrics.held(status, ids.length);
        logger.warn(
          { userId: first.userId, meter: first.meter, events: ids.length, value, reason },
          status === 'late'
            ? 'usage too late for its invoice: held as late, bill it by hand'
            : 'usage without a billable subscription item: held as unbillable',
        );
      }
    }
    return { send, meterId };
  }

  /**
   * A row first sent more than 23 hours ago may be at Stripe already, beyond
   * its identifier window: checked against the meter's summary first
   * (resend-check.ts). True when the row was dealt with here (marked sent or
   * held for review) and must not be sent.
   */
  async function settledByCheck(row: ClaimedEvent, meterId: string, customer: string): Promise<boolean> {
    if (!needsResendCheck(row, deps.now())) return false;
    const verdict = await checkAtStripe(deps, row, meterId, customer);
    if (verdict === 'absent') return false;
    if (verdict === 'present') {
      await markSent(deps.prisma, row.id, customer);
      deps.metrics.sent();
      logger.info({ eventId: row.id }, 'usage event already on the meter past 24 h; marked sent, not resent');
      return true;
    }
    const reason = 'maybe at Stripe past its 24 h identifier window: the meter summary does not tell';
    await markHeld(deps.prisma, { ids: [row.id], token, status: 'review', reason });
    deps.metrics.held('review', 1);
    logger.warn(
      { eventId: row.id, userId: row.userId, value: row.value },
      `usage event held for review: ${reason}`,
    );
    return true;
  }

  /** Sends one user+meter group in order; a retryable failure puts the rest back. */
  async function sendGroup(rows: ClaimedEvent[], leaseEndsAt: number): Promise<void> {
    const group = await placeGroup(rows);
    if (!group || group.send.length === 0) return;
    const placed = group.send;
    await markAttempted(
      deps.prisma,
      placed.map(([row]) => row.id),
      deps.now(),
    );
    for (const [index, [row, item]] of placed.entries()) {
      // Past most of the lease another sender may claim these rows: hand them back instead.
      if (stopping || clock() < pausedUntil || clock() > leaseEndsAt) {
        return releaseEvents(deps.prisma, {
          ids: placed.slice(index).map(([r]) => r.id),
          token,
          delayMs: Math.max(0, pausedUntil - clock()),
          attempted: false,
        });
      }
      let failure: SendFailure | undefined;
      try {
        if (await settledByCheck(row, group.meterId, item.stripeCustomerId)) continue;
        failure = await sendOne(row, item.stripeCustomerId);
      } catch (err) {
        failure = classifySendFailure(err);
      }
      if (!failure) continue;
      if (!failure.retry) {
        noteFailure(failure);
        logger.warn(
          { eventId: row.id, error: failure.message },
          'stripe refused a usage event; marked failed',
        );
        await markFailed(deps.prisma, row.id, token, failure.message);
        continue;
      }
      return holdBack(
        placed.slice(index).map(([r]) => r),
        failure,
        row,
      );
    }
  }

  /** Puts `rows` back after a retryable failure of `culprit` and pauses the sender as long. */
  async function holdBack(rows: ClaimedEvent[], failure: SendFailure, culprit: ClaimedEvent): Promise<void> {
    noteFailure(failure);
    const delayMs = retryDelayMs(culprit.attempts, failure, {
      baseMs: env.PAYMENT_USAGE_RETRY_BASE_MS,
      maxMs: env.PAYMENT_USAGE_RETRY_MAX_MS,
    });
    pausedUntil = Math.max(pausedUntil, clock() + delayMs);
    logger.warn(
      { eventId: culprit.id, kind: failure.kind, error: failure.message, retryInMs: delayMs },
      'usage event not sent; retrying later',
    );
    await releaseEvents(deps.prisma, {
      ids: [culprit.id],
      token,
      delayMs,
      attempted: true,
      error: failure.message,
    });
    await releaseEvents(deps.prisma, {
      ids: rows.filter((r) => r.id !== culprit.id).map((r) => r.id),
      token,
      delayMs,
      attempted: false,
    });
  }

  async function round(): Promise<number> {
    const leaseEndsAt = clock() + env.PAYMENT_USAGE_SENDER_LEASE_SECONDS * 800;
    const rows = await claimDueEvents(deps.prisma, {
      limit: env.PAYMENT_USAGE_SENDER_BATCH,
      leaseSeconds: env.PAYMENT_USAGE_SENDER_LEASE_SECONDS,
      token,
    });
    const groups = new Map<string, ClaimedEvent[]>();
    for (const row of rows) {
      const key = `${row.userId}\u0000${row.eventName}`;
      const group = groups.get(key);
      if (group) group.push(row);
      else groups.set(key, [row]);
    }
    const queue = [...groups.values()];
    const workers = Array.from(
      { length: Math.min(env.PAYMENT_USAGE_SENDER_CONCURRENCY, queue.length) },
      async () => {
        for (let group = queue.shift(); group; group = queue.shift()) await sendGroup(group, leaseEndsAt);
      },
    );
    await Promise.all(workers);
    return rows.length;
  }

  const loop = (async () => {
    while (!stopping) {
      let claimed = 0;
      try {
        claimed = await round();
      } catch (err) {
        logger.error({ err }, 'usage sender round failed; retrying');
        await sleep(env.PAYMENT_USAGE_SENDER_IDLE_MS);
        continue;
      }
      if (stopping) break;
      const pause = pausedUntil - clock();
      state.pausedUntil = pause > 0 ? new Date(pausedUntil).toISOString() : null;
      if (pause > 0) await sleep(pause);
      else if (claimed < env.PAYMENT_USAGE_SENDER_BATCH) await sleep(env.PAYMENT_USAGE_SENDER_IDLE_MS);
    }
    state.running = false;
  })();

  return {
    status: () => ({ ...state }),
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
