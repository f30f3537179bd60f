import type Stripe from 'stripe';
import type { PrismaClient } from '../generated/prisma/client';
import type { ClaimedEvent } from './repo';
import { readMinuteTotals } from './repo';

/**
 * Stripe drops a meter event whose `identifier` it saw within 24 hours (and
 * replays a call with the same idempotency key within 24 hours). A row first
 * sent longer ago than this may be at Stripe already, and a blind resend
 * would count it twice: it is checked against the meter's summaries first.
 */
export const RESEND_CHECK_AFTER_MS = 23 * 3600 * 1000;

/** Whether a row first sent more than RESEND_CHECK_AFTER_MS ago needs the check. */
export function needsResendCheck(row: ClaimedEvent, now: Date): boolean {
  return row.firstAttemptAt !== null && now.getTime() - row.firstAttemptAt.getTime() >= RESEND_CHECK_AFTER_MS;
}

/**
 * What Stripe's meter holds of the row, from the summary of the row's minute
 * for its customer: the summary minus what the outbox knows was sent there is
 * what Stripe has beyond that. `absent` when that is 0 (send it), `present`
 * when it is exactly the value of the rows of that minute that may be at
 * Stripe (this one among them: mark them sent, never resend), `unsure`
 * otherwise (hold for an operator's decision, docs/billing.md).
 */
export async function checkAtStripe(
  deps: { prisma: PrismaClient; stripe: Stripe },
  row: ClaimedEvent,
  meterId: string,
  customer: string,
): Promise<'absent' | 'present' | 'unsure'> {
  const start = Math.floor(row.occurredAt.getTime() / 60_000) * 60;
  let summary = 0;
  for await (const s of deps.stripe.billing.meters.listEventSummaries(meterId, {
    customer,
    start_time: start,
    end_time: start + 60,
  }))
    summary += s.aggregated_value;
  const known = await readMinuteTotals(deps.prisma, {
    userId: row.userId,
    eventName: row.eventName,
    from: new Date(start * 1000),
    to: new Date((start + 60) * 1000),
  });
  const beyond = summary - known.sent;
  if (beyond === 0) return 'absent';
  if (beyond === known.maybeSent && known.maybeSentIds.length === 1 && known.maybeSentIds[0] === row.id)
    return 'present';
  return 'unsure';
}
