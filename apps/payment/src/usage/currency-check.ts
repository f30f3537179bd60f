import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import type { PrismaClient } from '../generated/prisma/client';
import type { MeterDirectory } from './meter-directory';
import type { MeterConfig } from './meters';
import { findMeteredItems } from './repo';

/** A price on a meter whose currency is not the meter's configured one (PAYMENT_USAGE_METER_CURRENCIES). */
export type CurrencyMismatch = { meter: string; priceId: string; currency: string; expected: string };

export type CurrencyCheckDeps = {
  meters: MeterConfig | undefined;
  meterDirectory: MeterDirectory;
  logger: Logger;
};

/** Configured meters with a currency: Stripe meter id -> { meter name, currency }. */
async function expectedByMeterId(
  deps: CurrencyCheckDeps,
): Promise<Map<string, { meter: string; currency: string }>> {
  const out = new Map<string, { meter: string; currency: string }>();
  for (const [meter, currency] of deps.meters?.currencies ?? []) {
    const eventName = deps.meters?.eventNames.get(meter);
    const meterId = eventName === undefined ? undefined : await deps.meterDirectory.idOf(eventName);
    if (meterId !== undefined) out.set(meterId, { meter, currency });
  }
  return out;
}

function mismatchesOf(
  expected: Map<string, { meter: string; currency: string }>,
  prices: Array<{ priceId: string; meterId: string | null; currency: string | null }>,
): CurrencyMismatch[] {
  return prices.flatMap((p) => {
    const want = p.meterId === null ? undefined : expected.get(p.meterId);
    if (!want || p.currency === want.currency) return [];
    return [{ meter: want.meter, priceId: p.priceId, currency: p.currency ?? '?', expected: want.currency }];
  });
}

function logMismatches(logger: Logger, mismatches: CurrencyMismatch[], where: Record<string, unknown>): void {
  for (const m of mismatches)
    logger.error(
      { ...where, ...m },
      `price ${m.priceId} on meter ${m.meter} is in ${m.currency}, not ${m.expected}: usage on it is held, never sent`,
    );
}

/**
 * At start: every active recurring price on a meter with a configured
 * currency (billing by cost: the gateway's AI_COST_CURRENCY) must be in that
 * currency. Mismatches are logged at error and returned; usage that would
 * land on such a price is held `unbillable` (billing-home.ts), never sent.
 */
export async function checkPriceCurrencies(
  deps: CurrencyCheckDeps & { stripe: Stripe },
): Promise<CurrencyMismatch[]> {
  const expected = await expectedByMeterId(deps);
  if (expected.size === 0) return [];
  const prices: Array<{ priceId: string; meterId: string | null; currency: string | null }> = [];
  for await (const price of deps.stripe.prices.list({ active: true, type: 'recurring', limit: 100 }))
    prices.push({ priceId: price.id, meterId: price.recurring?.meter ?? null, currency: price.currency });
  const mismatches = mismatchesOf(expected, prices);
  logMismatches(deps.logger, mismatches, { check: 'start' });
  return mismatches;
}

/** On each stored subscription change: the user's metered items, the same check; logs and returns mismatches. */
export async function checkUserCurrencies(
  deps: CurrencyCheckDeps & { prisma: PrismaClient },
  userId: string,
): Promise<CurrencyMismatch[]> {
  const expected = await expectedByMeterId(deps);
  if (expected.size === 0) return [];
  const mismatches = mismatchesOf(expected, await findMeteredItems(deps.prisma, userId));
  logMismatches(deps.logger, mismatches, { check: 'subscription_change', userId });
  return mismatches;
}
