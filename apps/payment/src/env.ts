import { envFields, parseEnv } from '@platform/service-kit';
import { z } from 'zod';

/** Every environment variable of the payment service. docs/payment.md mirrors this table. */
export const ZPaymentEnv = z
  .object({
    NODE_ENV: envFields.nodeEnv(),
    /** Listen port. */
    PORT: envFields.port(3001),
    HOST: z.string().default('0.0.0.0'),
    LOG_LEVEL: envFields.logLevel(),
    WORKERS: envFields.workers(),
    /** Postgres connection URL; unset -> embedded PGlite in DATA_DIR (not in production). */
    DATABASE_URL: envFields.url().optional(),
    /** Folder of the embedded database when DATABASE_URL is unset. */
    DATA_DIR: z.string().default('.data/payment'),
    /** Redis URL for rate limits; unset -> in-process store (single instance, not in production). */
    REDIS_URL: envFields.url().optional(),
    /** Accepted X-API-Key values, comma-separated, so keys can be rotated without downtime. */
    PAYMENT_MS_API_KEY: envFields
      .list()
      .pipe(
        z.array(z.string().min(16, 'each key must be at least 16 characters')).min(1, 'at least one key'),
      ),
    /** Stripe secret key (sk_live_... / sk_test_... / rk_...). */
    STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_/, 'must be a Stripe secret or restricted key'),
    /** Webhook signing secret (whsec_...); unset -> POST /webhooks/stripe answers 503. */
    STRIPE_WEBHOOK_SECRET: z.string().startsWith('whsec_').optional(),
    /** protocol://host:port of another Stripe endpoint (tests, local mocks). */
    STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).optional(),
    STRIPE_TIMEOUT_MS: envFields.positiveInt(20_000),
    STRIPE_MAX_NETWORK_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
    /** Billing portal configuration id (bpc_...); unset -> Stripe's default configuration. */
    PAYMENT_PORTAL_CONFIGURATION: z.string().optional(),
    /** Comma-separated hosts allowed in success/cancel/return URLs; unset -> any host. */
    PAYMENT_ALLOWED_REDIRECT_HOSTS: envFields.list().optional(),
    /** A stored subscription snapshot older than this is refreshed from Stripe on read. */
    PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS: envFields.positiveInt(3600),
    /** Requests per minute per API key on /api/v1. */
    PAYMENT_RATE_LIMIT_PER_MINUTE: envFields.positiveInt(600),
    /** Express `trust proxy`: number of proxy hops in front of the service. */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(5).default(0),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production') return;
    if (!env.DATABASE_URL)
      ctx.addIssue({ code: 'custom', path: ['DATABASE_URL'], message: 'required in production' });
    if (!env.REDIS_URL)
      ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'required in production' });
  });

export type PaymentEnv = z.infer<typeof ZPaymentEnv>;

export function loadPaymentEnv(source: Record<string, string | undefined> = process.env): PaymentEnv {
  return parseEnv(ZPaymentEnv, source);
}
