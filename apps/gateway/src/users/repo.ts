import type { PrismaClient } from '../generated/prisma/client';

type Db = Pick<PrismaClient, 'user'>;

export type UserRow = { id: string; email: string; createdAt: Date };

const select = { id: true, email: true, createdAt: true } as const;

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'P2002';
}

/**
 * The user with this (lower-cased) address, created on first sign-in. The
 * unique index on email decides races; the loser of a concurrent insert reads
 * the winner's row.
 */
export async function upsertUserByEmail(prisma: Db, email: string): Promise<UserRow> {
  try {
    return await prisma.user.upsert({ where: { email }, create: { email }, update: {}, select });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return prisma.user.findUniqueOrThrow({ where: { email }, select });
  }
}

export async function findUserById(prisma: Db, id: string): Promise<UserRow | null> {
  return prisma.user.findUnique({ where: { id }, select });
}
