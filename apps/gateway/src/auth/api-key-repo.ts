import type { PrismaClient } from '../generated/prisma/client';

/** The queries of key verification: the lookup by hash and the batched last-used write. */
type Db = Pick<PrismaClient, 'apiKey' | '$transaction'>;

/** What the hot path needs to authenticate a key. */
export type ApiKeyRecord = { id: string; userId: string; scope: string; revoked: boolean };

export async function findApiKeyByHash(prisma: Db, hash: string): Promise<ApiKeyRecord | null> {
  const row = await prisma.apiKey.findUnique({
    where: { hash },
    select: { id: true, userId: true, scope: true, revokedAt: true },
  });
  return row ? { id: row.id, userId: row.userId, scope: row.scope, revoked: row.revokedAt !== null } : null;
}

/** One statement per key, all in one transaction; never moves last_used_at backwards. */
export async function writeLastUsed(prisma: Db, entries: { id: string; at: Date }[]): Promise<void> {
  if (entries.length === 0) return;
  await prisma.$transaction(
    entries.map(({ id, at }) =>
      prisma.apiKey.updateMany({
        where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: at } }] },
        data: { lastUsedAt: at },
      }),
    ),
  );
}
