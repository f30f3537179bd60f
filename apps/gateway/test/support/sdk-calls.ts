import type { AiHarness } from './ai-harness';

/**
 * The error `call` rejects with, as an instance of the SDK's error class
 * (OpenAI.APIError, Anthropic.APIError); the test fails if it resolves or
 * rejects with anything else.
 */
// biome-ignore lint/suspicious/noExplicitAny: any constructor; the result is its InstanceType
export async function sdkErrorOf<C extends abstract new (...args: any) => unknown>(
  call: Promise<unknown>,
  errorClass: C,
): Promise<InstanceType<C>> {
  const err = await call.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  if (!(err instanceof errorClass)) throw err;
  return err as InstanceType<C>;
}

/** The user's usage ledger rows made while `run` ran (written to Postgres by a flush). */
export async function usageRowsDuring(h: AiHarness, userId: string, run: () => Promise<unknown>) {
  const where = { userId };
  await h.usage.flush();
  const last = await h.prisma.usageRecord.findFirst({ where, orderBy: { id: 'desc' }, select: { id: true } });
  await run();
  await h.usage.flush();
  return h.prisma.usageRecord.findMany({
    where: { ...where, id: { gt: last?.id ?? BigInt(0) } },
    orderBy: { id: 'asc' },
  });
}
