import type { PrismaClient } from '../generated/prisma/client';

export async function isEventProcessed(prisma: PrismaClient, eventId: string): Promise<boolean> {
  const row = await prisma.webhookEvent.findUnique({ where: { id: eventId }, select: { id: true } });
  return row !== null;
}

/** Records a processed event; recording one twice (a concurrent duplicate delivery) is harmless. */
export async function recordEvent(
  prisma: PrismaClient,
  event: { id: string; type: string; createdAt: Date },
): Promise<void> {
  await prisma.webhookEvent.createMany({
    data: [{ id: event.id, type: event.type, stripeCreatedAt: event.createdAt }],
    skipDuplicates: true,
  });
}

/** Drops processed-event ids older than `before` (the retention window); returns how many. */
export async function pruneEvents(prisma: PrismaClient, before: Date): Promise<number> {
  const { count } = await prisma.webhookEvent.deleteMany({ where: { processedAt: { lt: before } } });
  return count;
}
