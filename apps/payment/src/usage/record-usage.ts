import {
  type UsageEventRefusalReason,
  type UsageEventResult,
  type UsageEventsResponse,
  ZUsageEvent,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { PaymentEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import type { MeterConfig } from './meters';
import type { UsageMetrics } from './metrics';
import { forgetRefusals, parkRefusals, type Refusal } from './refusals-repo';
import { findEvents, insertNewEvents, type OutboxEvent } from './repo';

export type RecordUsageDeps = {
  prisma: PrismaClient;
  now: () => Date;
  meters: MeterConfig | undefined;
  logger: Logger;
  env: Pick<PaymentEnv, 'PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS'>;
  metrics: Pick<UsageMetrics, 'refused'>;
};

/** Stripe takes meter events up to 35 calendar days old. */
const MAX_AGE_MS = 35 * 24 * 3600 * 1000;

type Outcome = UsageEventResult['outcome'];

function sameEvent(a: OutboxEvent, b: OutboxEvent): boolean {
  return (
    a.userId === b.userId &&
    a.meter === b.meter &&
    a.value === b.value &&
    a.occurredAt.getTime() === b.occurredAt.getTime()
  );
}

type Checked = { event: OutboxEvent; refusal?: undefined } | { event?: undefined; refusal: Refusal };

function refuse(
  raw: Record<string, unknown> & { id: string },
  reason: UsageEventRefusalReason,
  message: string,
  event?: Partial<OutboxEvent>,
): Checked {
  return { refusal: { id: raw.id, reason, message, raw, ...event } };
}

/**
 * Checks one event on its own: its fields, its meter, its timestamp against
 * payment's clock (Stripe's 35 days back; ahead at most the tolerated skew).
 */
function checkEvent(
  meters: MeterConfig,
  now: number,
  maxAheadMs: number,
  raw: Record<string, unknown> & { id: string },
): Checked {
  const parsed = ZUsageEvent.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return refuse(raw, 'invalid_event', `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const e = parsed.data;
  const meter = e.meter ?? meters.defaultMeter;
  const occurredAt = new Date(e.timestamp);
  const fields = { userId: e.user_id, meter, value: e.value, occurredAt };
  const eventName = meters.eventNames.get(meter);
  if (eventName === undefined) return refuse(raw, 'unknown_meter', `unknown meter "${meter}"`, fields);
  const at = occurredAt.getTime();
  if (at < now - MAX_AGE_MS)
    return refuse(raw, 'timestamp_too_old', 'older than 35 days: Stripe no longer takes it', fields);
  if (at > now + maxAheadMs)
    return refuse(
      raw,
      'timestamp_in_future',
      `more than ${maxAheadMs / 1000} s ahead of payment's clock (${new Date(now).toISOString()})`,
      fields,
    );
  return { event: { id: e.id, eventName, ...fields } };
}

/** Stores the new events and answers each stored one `stored`, `duplicate` or `conflict`. */
async function storeEvents(deps: RecordUsageDeps, events: OutboxEvent[]): Promise<Map<OutboxEvent, Outcome>> {
  const firstById = new Map<string, OutboxEvent>();
  for (const event of events) if (!firstById.has(event.id)) firstById.set(event.id, event);
  const inserted = await insertNewEvents(deps.prisma, [...firstById.values()], deps.now());
  const others = [...firstById.keys()].filter((id) => !inserted.has(id));
  const stored = new Map((await findEvents(deps.prisma, others)).map((row) => [row.id, row]));
  for (const id of inserted) {
    const event = firstById.get(id);
    if (event) stored.set(id, event);
  }
  const claimed = new Set<string>();
  const outcomes = new Map<OutboxEvent, Outcome>();
  for (const event of events) {
    const existing = stored.get(event.id);
    let outcome: Outcome;
    if (!existing || !sameEvent(existing, event)) outcome = 'conflict';
    else if (inserted.has(event.id) && !claimed.has(event.id)) outcome = 'stored';
    else outcome = 'duplicate';
    claimed.add(event.id);
    outcomes.set(event, outcome);
  }
  if (inserted.size > 0) await forgetRefusals(deps.prisma, [...inserted]);
  return outcomes;
}

/**
 * Stores a batch of usage events in the outbox, idempotent by event id, and
 * answers each event. The insert commits before this returns, so an answer
 * means durable. An id seen before (in an earlier call, a concurrent one, or
 * earlier in this batch) is `duplicate` when every field matches and
 * `conflict` when one differs; a conflicting event is never stored. An event
 * with an unknown meter, a timestamp out of range or an invalid field is
 * `refused` with its reason and parked in `usage_event_refusals` (listed at
 * `GET /api/v1/usage-events/refused`, counted, logged); the rest of the batch
 * is stored, so one bad event never stops a caller's shipping.
 */
export async function recordUsageEvents(
  deps: RecordUsageDeps,
  request: { events: Array<Record<string, unknown> & { id: string }> },
): Promise<UsageEventsResponse> {
  const meters = deps.meters;
  if (!meters) throw new AppError('service_unavailable', { message: 'usage billing is not configured' });
  const now = deps.now().getTime();
  const maxAheadMs = deps.env.PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS * 1000;
  const checked = request.events.map((raw) => checkEvent(meters, now, maxAheadMs, raw));
  const refusals = checked.flatMap((c) => (c.refusal ? [c.refusal] : []));
  const outcomes = await storeEvents(
    deps,
    checked.flatMap((c) => (c.event ? [c.event] : [])),
  );
  if (refusals.length > 0) {
    await parkRefusals(deps.prisma, refusals, deps.now());
    for (const r of refusals) deps.metrics.refused(r.reason);
    deps.logger.warn(
      { refused: refusals.length, sample: refusals.slice(0, 5).map((r) => ({ id: r.id, reason: r.reason })) },
      'usage events refused and parked',
    );
  }
  const results = checked.map((c): UsageEventResult => {
    if (c.refusal)
      return { id: c.refusal.id, outcome: 'refused', reason: c.refusal.reason, message: c.refusal.message };
    return { id: c.event.id, outcome: outcomes.get(c.event) ?? 'conflict' };
  });
  const count = (outcome: Outcome) => results.filter((r) => r.outcome === outcome).length;
  return {
    stored: count('stored'),
    duplicates: count('duplicate'),
    conflicts: count('conflict'),
    refused: count('refused'),
    results,
  };
}
