import type { RawSql } from '../batching/raw-sql';
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

type ProviderKeySqlRow = {
  provider: string;
  master_key_id: string;
  iv: Uint8Array;
  ciphertext: Uint8Array;
  auth_tag: Uint8Array;
  last4: string;
  created_at: Date;
};

/**
 * A user's stored keys, by provider. On raw SQL (the pool's `pg`): the AI hot
 * path reads these, and a chat's queries stay off Prisma's query compiler
 * (~8-9 MB per worker once loaded; docs/performance.md, issue 46).
 */
export async function findProviderKeys(sql: RawSql, userId: string): Promise<ProviderKeyRow[]> {
  const rows = await sql.query<ProviderKeySqlRow>(
    `SELECT provider, master_key_id, iv, ciphertext, auth_tag, last4, created_at
       FROM provider_keys WHERE user_id = $1::uuid ORDER BY provider`,
    [userId],
  );
  return rows.map((r) => ({
    provider: r.provider,
    masterKeyId: r.master_key_id,
    iv: r.iv,
    ciphertext: r.ciphertext,
    authTag: r.auth_tag,
    last4: r.last4,
    createdAt: new Date(r.created_at),
  }));
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
