import type { Prisma, PrismaClient } from '../../generated/prisma/client';

/** One stored response as read back: the answer as sent and the conversation through it. */
export type StoredResponseRow = { response: unknown; messages: unknown };

export async function insertStoredResponse(
  prisma: PrismaClient,
  row: { id: string; userId: string; response: object; messages: object; expiresAt: Date },
): Promise<void> {
  await prisma.storedResponse.create({
    data: {
      id: row.id,
      userId: row.userId,
      response: row.response as Prisma.InputJsonObject,
      messages: row.messages as Prisma.InputJsonObject,
      expiresAt: row.expiresAt,
    },
  });
}

/** The user's stored response, null when there is none (or another user's, or expired). */
export async function findStoredResponse(
  prisma: PrismaClient,
  userId: string,
  id: string,
  now: Date,
): Promise<StoredResponseRow | null> {
  return prisma.storedResponse.findFirst({
    where: { id, userId, expiresAt: { gt: now } },
    select: { response: true, messages: true },
  });
}

/** Deletes the user's stored response; false when the user has none by that id. */
export async function deleteStoredResponse(
  prisma: PrismaClient,
  userId: string,
  id: string,
): Promise<boolean> {
  const { count } = await prisma.storedResponse.deleteMany({ where: { id, userId } });
  return count > 0;
}

/** Deletes at most `batch` expired responses, oldest first; returns how many. */
export async function deleteExpiredResponses(
  prisma: PrismaClient,
  now: Date,
  batch: number,
): Promise<number> {
  return prisma.$executeRaw`
    DELETE FROM stored_responses
     WHERE id IN (SELECT id FROM stored_responses WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${batch})`;
}
