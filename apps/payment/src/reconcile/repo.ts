import type { PrismaClient } from '../generated/prisma/client';

export async function readCursor(prisma: PrismaClient, name: string): Promise<string | undefined> {
  const row = await prisma.reconcileCursor.findUnique({ where: { name }, select: { value: true } });
  return row?.value;
}

export async function writeCursor(prisma: PrismaClient, name: string, value: string): Promise<void> {
  await prisma.reconcileCursor.upsert({ where: { name }, create: { name, value }, update: { value } });
}
