import type { PaymentEnv } from '../env';

/** Meter names callers use, mapped to the Stripe meter `event_name` each one feeds. */
export type MeterConfig = {
  /** name -> Stripe event_name */
  eventNames: ReadonlyMap<string, string>;
  defaultMeter: string;
  /** name -> the currency its prices must have (lower case); absent: any. */
  currencies: ReadonlyMap<string, string>;
};

/**
 * Reads PAYMENT_USAGE_METERS (`name=event_name,...`; a bare `name` uses the
 * name as event name) and PAYMENT_USAGE_DEFAULT_METER. Undefined when usage
 * billing is not configured; throws on a malformed value so start fails loudly.
 */
export function readMeterConfig(
  env: Pick<
    PaymentEnv,
    'PAYMENT_USAGE_METERS' | 'PAYMENT_USAGE_DEFAULT_METER' | 'PAYMENT_USAGE_METER_CURRENCIES'
  >,
): MeterConfig | undefined {
  const entries = env.PAYMENT_USAGE_METERS ?? [];
  if (entries.length === 0) return undefined;
  const eventNames = new Map<string, string>();
  for (const entry of entries) {
    const [name = '', eventName = name, ...rest] = entry.split('=').map((part) => part.trim());
    if (name === '' || eventName === '' || rest.length > 0 || eventName.length > 100)
      throw new Error(`PAYMENT_USAGE_METERS: "${entry}" is not name=stripe_event_name`);
    eventNames.set(name, eventName);
  }
  const defaultMeter = env.PAYMENT_USAGE_DEFAULT_METER ?? [...eventNames.keys()][0] ?? '';
  if (!eventNames.has(defaultMeter))
    throw new Error(`PAYMENT_USAGE_DEFAULT_METER: "${defaultMeter}" is not in PAYMENT_USAGE_METERS`);
  const currencies = new Map<string, string>();
  for (const entry of env.PAYMENT_USAGE_METER_CURRENCIES ?? []) {
    const [name = '', currency = ''] = entry.split('=').map((part) => part.trim());
    if (!eventNames.has(name) || !/^[a-zA-Z]{3}$/.test(currency))
      throw new Error(
        `PAYMENT_USAGE_METER_CURRENCIES: "${entry}" is not meter=currency of a configured meter`,
      );
    currencies.set(name, currency.toLowerCase());
  }
  return { eventNames, defaultMeter, currencies };
}
