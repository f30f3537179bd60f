import type { ApiKeyRules } from '@platform/contract';
import type * as GeneratedPrisma from '../generated/prisma/client';

type Db = Pick<GeneratedPrisma.PrismaClient, 'apiKey' | '$transaction' | '$queryRaw'>;

/**
 * Prisma's JSON null (a key without rules), read when a key is written: the
 * module is loaded by then (the write runs through Prisma), and importing it
 * here would load Prisma into every worker at start (lazy-prisma.ts).
 */
const dbNull = () => (require('../generated/prisma/client') as typeof GeneratedPrisma).Prisma.DbNull;

export type NewApiKeyRow = {
  userId: string;
  name: string;
  scope: string;
  prefix: string;
  hash: string;
  rules?: ApiKeyRules | undefined;
  expiresAt?: Date | undefined;
};

export type StoredApiKey = {
  id: string;
  name: string;
  scope: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  rules: unknown;
  expiresAt: Date | null;
};

/**
 * Inserts a key unless the user already has `max` active ones. The user row is
 * locked (`SELECT … FOR UPDATE`) so concurrent creates for one user run one at
 * a time and the count they see is current; returns null when the limit is hit.
 */
export async function insertApiKeyWithinLimit(
  prisma: Db,
  row: NewApiKeyRow,
  max: number,
): Promise<StoredApiKey | null> {
  return prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM users WHERE id = ${row.userId}::uuid FOR UPDATE`;
    if (locked.length === 0) throw new Error('user vanished while creating an api key');
    const active = await tx.apiKey.count({ where: { userId: row.userId, revokedAt: null } });
    if (active >= max) return null;
    const { rules, ...rest } = row;
    return tx.apiKey.create({ data: { ...rest, rules: rules ?? dbNull() }, select: storedSelect });
  });
}

const storedSelect = {
  id: true,
  name: true,
  scope: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  rules: true,
  expiresAt: true,
} as const;

export async function listApiKeysOf(prisma: Db, userId: string): Promise<StoredApiKey[]> {
  return prisma.apiKey.findMany({
    where: { userId },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    select: storedSelect,
  });
}

/** The key if `userId` owns it; another user's key looks exactly like a missing one. */
export async function findOwnedApiKey(
  prisma: Db,
  userId: string,
  keyId: string,
): Promise<{ id: string; hash: string; revokedAt: Date | null } | null> {
  return prisma.apiKey.findFirst({
    where: { id: keyId, userId },
    select: { id: true, hash: true, revokedAt: true },
  });
}

export async function markApiKeyRevoked(prisma: Db, keyId: string, at: Date): Promise<void> {
  await prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: at } });
}

/** Replaces a key's rules and expiry; returns the previous ones (for the audit log), null if not the user's. */
export async function replaceApiKeyRules(
  prisma: Db,
  userId: string,
  keyId: string,
  next: { rules: ApiKeyRules | null; expiresAt: Date | null },
): Promise<{ hash: string; rules: unknown; expiresAt: Date | null } | null> {
  return prisma.$transaction(async (tx) => {
    const before = await tx.apiKey.findFirst({
      where: { id: keyId, userId },
      select: { hash: true, rules: true, expiresAt: true },
    });
    if (!before) return null;
    await tx.apiKey.update({
      where: { id: keyId },
      data: { rules: next.rules ?? dbNull(), expiresAt: next.expiresAt },
    });
    return before;
  });
}
