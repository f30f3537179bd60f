import Stripe from 'stripe';
import type { PaymentEnv } from './env';

/** The Stripe API version this service is written against; pinned so upgrades are deliberate. */
export const STRIPE_API_VERSION = '2026-10-28.endive' as const;

export function createStripeClient(
  env: Pick<
    PaymentEnv,
    'STRIPE_SECRET_KEY' | 'STRIPE_API_BASE' | 'STRIPE_TIMEOUT_MS' | 'STRIPE_MAX_NETWORK_RETRIES'
  >,
): Stripe {
  const base = env.STRIPE_API_BASE ? new URL(env.STRIPE_API_BASE) : undefined;
  return new Stripe(env.STRIPE_SECRET_KEY, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: env.STRIPE_MAX_NETWORK_RETRIES,
    timeout: env.STRIPE_TIMEOUT_MS,
    telemetry: false,
    appInfo: { name: 'platform-payment' },
    ...(base
      ? {
          host: base.hostname,
          port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
          protocol: base.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
  });
}
