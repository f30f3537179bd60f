import { tracingOn } from '@platform/service-kit';
import Stripe from 'stripe';
import type { PaymentEnv } from './env';
import { tracedStripeFetch } from './observability/stripe-spans';

/** The Stripe API version this service is written against; pinned so upgrades are deliberate. */
export const STRIPE_API_VERSION = '2026-10-28.endive' as const;

/** The stand-in keys of config/local.env and .env.example: they pass validation, Stripe refuses them. */
const PLACEHOLDER_KEY = /^sk_test_(local_placeholder|replace_me)$/;

/**
 * What to tell an operator who started the service with a placeholder Stripe
 * key (the local defaults), or undefined for a real key or a Stripe stand-in
 * (STRIPE_API_BASE). Without it the first checkout answers 502 `stripe
 * unavailable` after a second, with nothing pointing at the key.
 */
export function placeholderStripeKeyWarning(
  env: Pick<PaymentEnv, 'STRIPE_SECRET_KEY' | 'STRIPE_API_BASE'>,
): string | undefined {
  if (env.STRIPE_API_BASE || !PLACEHOLDER_KEY.test(env.STRIPE_SECRET_KEY)) return undefined;
  return (
    `STRIPE_SECRET_KEY is the placeholder ${env.STRIPE_SECRET_KEY}: every Stripe call (checkout, portal, status refresh) ` +
    'will answer 502 stripe unavailable. Use a test key: copy the secret key (sk_test_...) from ' +
    'https://dashboard.stripe.com/test/apikeys into ./.env as STRIPE_SECRET_KEY=sk_test_... and restart.'
  );
}

/**
 * The Stripe client. With `abortSignal` (the server's drain deadline) every call
 * still in flight when it fires is aborted, and later ones fail at once: the
 * requests waiting for them have been answered 503 by then. That needs Stripe's
 * fetch-based HTTP client, which hands each call's own timeout signal to fetch;
 * tracing (when on) uses it too, for a span per Stripe call.
 */
export function createStripeClient(
  env: Pick<
    PaymentEnv,
    'STRIPE_SECRET_KEY' | 'STRIPE_API_BASE' | 'STRIPE_TIMEOUT_MS' | 'STRIPE_MAX_NETWORK_RETRIES'
  >,
  opts: { abortSignal?: AbortSignal } = {},
): Stripe {
  const base = env.STRIPE_API_BASE ? new URL(env.STRIPE_API_BASE) : undefined;
  const { abortSignal } = opts;
  const withDeadline = abortSignal
    ? (url: string | URL | Request, init?: RequestInit) =>
        fetch(url, {
          ...init,
          signal: init?.signal ? AbortSignal.any([init.signal, abortSignal]) : abortSignal,
        })
    : undefined;
  // With tracing on, every Stripe HTTP call is a span (observability/stripe-spans.ts).
  const tracedFetch = tracingOn() ? tracedStripeFetch(withDeadline ?? fetch) : withDeadline;
  const httpClient = tracedFetch ? Stripe.createFetchHttpClient(tracedFetch) : undefined;
  return new Stripe(env.STRIPE_SECRET_KEY, {
    ...(httpClient ? { httpClient } : {}),
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
