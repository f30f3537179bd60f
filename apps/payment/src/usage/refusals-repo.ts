import type { UsageEventRefusal, UsageEventRefusalReason } from '@platform/contract';
import type { PrismaClient } from '../generated/prisma/client';

/** A refused event as it is parked: the posted body and what could be read of it. */
export type Refusal = {
  id: string;
  reason: UsageEventRefusalReason;
  message: string;
  raw: Record<string, unknown>;
  userId?: string;
  meter?: string;
  value?: number;
  occurredAt?: Date;
};

/** Parks refused events, one row per event id; a refusal seen again counts once more. */
export async function parkRefusals(prisma: PrismaClient, refusals: Refusal[], now: Date): Promise<void> {
  const byId = new Map(refusals.map((r) => [r.id, r]));
  const rows = [...byId.values()];
  await prisma.$executeRaw`
    INSERT INTO usage_event_refusals
      (id, user_id, meter, value, occurred_at, reason, detail, event, first_refused_at, last_refused_at)
    SELECT r.id, r.user_id, r.meter, r.value, r.occurred_at, r.reason, r.detail, r.event, ${now}, ${now}
    FROM unnest(
      ${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.userId ?? null)}::text[],
      ${rows.map((r) => r.meter ?? null)}::text[], ${rows.map((r) => r.value ?? null)}::int[],
      ${rows.map((r) => r.occurredAt?.toISOString() ?? null)}::timestamptz[],
      ${rows.map((r) => r.reason)}::text[], ${rows.map((r) => r.message.slice(0, 500))}::text[],
      ${rows.map((r) => JSON.stringify(r.raw))}::jsonb[])
      AS r(id, user_id, meter, value, occurred_at, reason, detail, event)
    ON CONFLICT (id) DO UPDATE SET
      times = usage_event_refusals.times + 1, last_refused_at = EXCLUDED.last_refused_at,
      reason = EXCLUDED.reason, detail = EXCLUDED.detail, event = EXCLUDED.event,
      user_id = EXCLUDED.user_id, meter = EXCLUDED.meter, value = EXCLUDED.value,
      occurred_at = EXCLUDED.occurred_at`;
}

/** Events stored after all (posted again once fixed) leave the parked list. */
export async function forgetRefusals(prisma: PrismaClient, ids: string[]): Promise<void> {
  await prisma.$executeRaw`DELETE FROM usage_event_refusals WHERE id = ANY(${ids}::text[])`;
}

export async function listRefusals(prisma: PrismaClient, limit: number): Promise<UsageEventRefusal[]> {
  const rows = await prisma.usageEventRefusal.findMany({ orderBy: { lastRefusedAt: 'desc' }, take: limit });
  return rows.map((row) => ({
    id: row.id,
    reason: row.reason as UsageEventRefusalReason,
    message: row.detail,
    event: row.event as Record<string, unknown>,
    times: row.times,
    first_refused_at: row.firstRefusedAt.toISOString(),
    last_refused_at: row.lastRefusedAt.toISOString(),
  }));
}
