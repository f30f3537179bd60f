import type { UsageEventsRequest, UsageEventsResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { PrismaClient } from '../generated/prisma/client';
import type { MeterConfig } from './meters';
import { findEvents, insertNewEvents, type OutboxEvent } from './repo';

export type RecordUsageDeps = { prisma: PrismaClient; now: () => Date; meters: MeterConfig | undefined };

/** Stripe takes meter events up to 35 calendar days old and 5 minutes ahead. */
const MAX_AGE_MS = 35 * 24 * 3600 * 1000;
const MAX_AHEAD_MS = 5 * 60 * 1000;

type Outcome = UsageEventsResponse['results'][number]['outcome'];

function sameEvent(a: OutboxEvent, b: OutboxEvent): boolean {
  return (
    a.userId === b.userId &&
    a.meter === b.meter &&
    a.value === b.value &&
    a.occurredAt.getTime() === b.occurredAt.getTime()
  );
}

/** Resolves meters and checks timestamps for the whole batch first: one bad event refuses it all (400). */
function toOutboxEvents(deps: RecordUsageDeps, request: UsageEventsRequest): OutboxEvent[] {
  const meters = deps.meters;
  if (!meters) throw new AppError('service_unavailable', { message: 'usage billing is not configured' });
  const now = deps.now().getTime();
  const problems: Array<{ path: string; message: string }> = [];
  const events = request.events.map((event, index) => {
    const meter = event.meter ?? meters.defaultMeter;
    const eventName = meters.eventNames.get(meter) ?? '';
    if (eventName === '')
      problems.push({ path: `events.${index}.meter`, message: `unknown meter "${meter}"` });
    const occurredAt = new Date(event.timestamp);
    const at = occurredAt.getTime();
    if (at > now + MAX_AHEAD_MS || at < now - MAX_AGE_MS)
      problems.push({
        path: `events.${index}.timestamp`,
        message: 'must be within the past 35 days and at most 5 minutes ahead',
      });
    return { id: event.id, userId: event.user_id, meter, eventName, value: event.value, occurredAt };
  });
  if (problems.length > 0) throw new AppError('validation_failed', { details: problems.slice(0, 20) });
  return events;
}

/**
 * Stores a batch of usage events in the outbox, idempotent by event id. The
 * insert commits before this returns, so an answer means durable. An id seen
 * before (in an earlier call, a concurrent one, or earlier in this batch) is
 * `duplicate` when every field matches and `conflict` when one differs; a
 * conflicting event is never stored, and the rest of the batch is.
 */
export async function recordUsageEvents(
  deps: RecordUsageDeps,
  request: UsageEventsRequest,
): Promise<UsageEventsResponse> {
  const events = toOutboxEvents(deps, request);
  const firstById = new Map<string, OutboxEvent>();
  for (const event of events) if (!firstById.has(event.id)) firstById.set(event.id, event);
  const inserted = await insertNewEvents(deps.prisma, [...firstById.values()]);
  const others = [...firstById.keys()].filter((id) => !inserted.has(id));
  const stored = new Map((await findEvents(deps.prisma, others)).map((row) => [row.id, row]));
  for (const id of inserted) {
    const event = firstById.get(id);
    if (event) stored.set(id, event);
  }
  const claimed = new Set<string>();
  const results = events.map((event): { id: string; outcome: Outcome } => {
    const existing = stored.get(event.id);
    let outcome: Outcome;
    if (!existing || !sameEvent(existing, event)) outcome = 'conflict';
    else if (inserted.has(event.id) && !claimed.has(event.id)) outcome = 'stored';
    else outcome = 'duplicate';
    claimed.add(event.id);
    return { id: event.id, outcome };
  });
  const count = (outcome: Outcome) => results.filter((r) => r.outcome === outcome).length;
  return { stored: count('stored'), duplicates: count('duplicate'), conflicts: count('conflict'), results };
}
