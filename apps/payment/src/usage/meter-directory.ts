import { type Clock, systemClock } from '@platform/service-kit';
import type Stripe from 'stripe';

/** Stripe's active meters by event name: what a price's `recurring.meter` (`mtr_...`) refers to. */
export type MeterDirectory = { idOf(eventName: string): Promise<string | undefined> };

/**
 * Reads `billing.meters.list` once per `ttlMs` (meters rarely change), and
 * again at most once a minute when an event name is not found (a meter
 * created since).
 */
export function createMeterDirectory(
  stripe: Stripe,
  ttlMs = 10 * 60_000,
  clock: Clock = systemClock,
): MeterDirectory {
  let ids = new Map<string, string>();
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;
  const read = () => {
    reading ??= (async () => {
      const next = new Map<string, string>();
      for await (const meter of stripe.billing.meters.list({ status: 'active', limit: 100 }))
        next.set(meter.event_name, meter.id);
      ids = next;
      readAt = clock();
    })().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  return {
    async idOf(eventName) {
      const age = clock() - readAt;
      if (age > ttlMs || (!ids.has(eventName) && age > 60_000)) await read();
      return ids.get(eventName);
    },
  };
}
