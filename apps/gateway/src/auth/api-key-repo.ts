import type { ApiKeyRules } from '@platform/contract';
import type { PrismaClient } from '../generated/prisma/client';
import { storedRulesOf } from '../key-rules/rules';

/** The queries of key verification: the lookup by hash and the batched last-used write. */
type Db = Pick<PrismaClient, 'apiKey' | '$transaction'>;

/** What the hot path needs to authenticate a key. */
export type ApiKeyRecord = {
  id: string;
  userId: string;
  scope: string;
  revoked: boolean;
  rules: ApiKeyRules | undefined;
  /** ms since the epoch; null: never expires. */
  expiresAt: number | null;
};

export async function findApiKeyByHash(prisma: Db, hash: string): Promise<ApiKeyRecord | null> {
  const row = await prisma.apiKey.findUnique({
    where: { hash },
    select: { id: true, userId: true, scope: true, revokedAt: true, rules: true, expiresAt: true },
  });
  if (!row) return null;
  return {
    id: row.id,
    userId: row.userId,
    scope: row.scope,
    revoked: row.revokedAt !== null,
    rules: storedRulesOf(row.rules),
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
  };
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
