import type { BillableResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { PaymentEnv } from '../env';
import type { PrismaClient } from '../generated/prisma/client';
import { callStripe } from '../stripe-errors';
import { placeEvent } from './billing-home';
import type { MeterDirectory } from './meter-directory';
import type { MeterConfig } from './meters';
import { findBillingItems } from './repo';

export type BillableDeps = {
  prisma: PrismaClient;
  now: () => Date;
  meters: MeterConfig | undefined;
  meterDirectory: MeterDirectory;
  env: Pick<PaymentEnv, 'PAYMENT_USAGE_INVOICE_GRACE_SECONDS'>;
};

/**
 * Whether usage of `userId` on the meter, happening now, would be sent (and
 * so land on an invoice): the same placement the sender makes (billing-home.ts).
 */
export async function checkBillable(
  deps: BillableDeps,
  userId: string,
  meterName: string | undefined,
): Promise<BillableResponse> {
  const meters = deps.meters;
  if (!meters) throw new AppError('service_unavailable', { message: 'usage billing is not configured' });
  const meter = meterName ?? meters.defaultMeter;
  const eventName = meters.eventNames.get(meter);
  if (eventName === undefined)
    throw new AppError('validation_failed', {
      details: [{ path: 'meter', message: `unknown meter "${meter}"` }],
    });
  const no = (reason: string): BillableResponse => ({
    billable: false,
    meter,
    subscription_id: null,
    price_id: null,
    reason,
  });
  const meterId = await callStripe(() => deps.meterDirectory.idOf(eventName));
  if (meterId === undefined) return no(`no active Stripe meter for event_name ${eventName}`);
  const items = await findBillingItems(deps.prisma, userId, meterId);
  const now = deps.now();
  const placed = placeEvent(
    items,
    now,
    now,
    { graceMs: deps.env.PAYMENT_USAGE_INVOICE_GRACE_SECONDS * 1000, currency: meters.currencies.get(meter) },
    meter,
  );
  if (placed.kind !== 'send') return no(placed.reason);
  return {
    billable: true,
    meter,
    subscription_id: placed.item.subscriptionId,
    price_id: placed.item.priceId,
    reason: null,
  };
}
