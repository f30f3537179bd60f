import type { PrismaClient } from '../generated/prisma/client';
import type { SealedKey } from './crypto';

/** A stored key row without its plaintext. */
export type ProviderKeyRow = SealedKey & { provider: string; last4: string; createdAt: Date };

/** Stores or replaces the key of one provider; a replacement counts as newly created. */
export async function upsertProviderKey(
  prisma: PrismaClient,
  row: { userId: string; provider: string; last4: string; sealed: SealedKey; at: Date },
): Promise<{ createdAt: Date }> {
  const data = {
    masterKeyId: row.sealed.masterKeyId,
    iv: Buffer.from(row.sealed.iv),
    ciphertext: Buffer.from(row.sealed.ciphertext),
    authTag: Buffer.from(row.sealed.authTag),
    last4: row.last4,
  };
  return prisma.providerKey.upsert({
    where: { userId_provider: { userId: row.userId, provider: row.provider } },
    create: { userId: row.userId, provider: row.provider, ...data, createdAt: row.at },
    update: { ...data, createdAt: row.at },
    select: { createdAt: true },
  });
}

export async function findProviderKeys(prisma: PrismaClient, userId: string): Promise<ProviderKeyRow[]> {
  return prisma.providerKey.findMany({
    where: { userId },
    orderBy: { provider: 'asc' },
    select: {
      provider: true,
      masterKeyId: true,
      iv: true,
      ciphertext: true,
      authTag: true,
      last4: true,
      createdAt: true,
    },
  });
}

/** True when a row was deleted. */
export async function deleteProviderKey(
  prisma: PrismaClient,
  userId: string,
  provider: string,
): Promise<boolean> {
  const { count } = await prisma.providerKey.deleteMany({ where: { userId, provider } });
  return count > 0;
}
