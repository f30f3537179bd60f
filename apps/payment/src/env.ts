import { envFields, otelVariablesOf, parseEnv, serviceEnvFields } from '@platform/service-kit';
import { z } from 'zod';

const { urlOf } = envFields;

/** Every environment variable of the payment service. docs/payment.md mirrors this table. */
export const ZPaymentEnv = z
  .object({
    /** NODE_ENV to REDIS_URL as every service reads them (service-kit serviceEnvFields). */
    /** Redis keeps the rate limits. */
    ...serviceEnvFields({ port: 3001, dataDir: '.data/payment' }),
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
    STRIPE_API_BASE: urlOf(['http', 'https']).optional(),
    STRIPE_TIMEOUT_MS: envFields.positiveInt(20_000),
    STRIPE_MAX_NETWORK_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
    /** Billing portal configuration id (bpc_...); unset -> Stripe's default configuration. */
    PAYMENT_PORTAL_CONFIGURATION: z.string().optional(),
    /** Comma-separated hosts allowed in success/cancel/return URLs; unset -> any host. */
    PAYMENT_ALLOWED_REDIRECT_HOSTS: envFields.list().optional(),
    /** A stored subscription snapshot older than this is refreshed from Stripe on read. */
    PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS: envFields.positiveInt(3600),
    /**
     * The gateway's `POST /api/v1/billing/subscription-changes` (docs/billing.md, paid lanes): told
     * the user id after a webhook changed a subscription, so its cache forgets the old status. Unset
     * -> not called (the gateway's cache expires by itself).
     */
    GATEWAY_SUBSCRIPTION_NOTIFY_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** The gateway's GATEWAY_SERVICE_TOKEN, sent as a Bearer token with that call. */
    GATEWAY_SERVICE_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    /** Requests per minute per API key on /api/v1. */
    PAYMENT_RATE_LIMIT_PER_MINUTE: envFields.positiveInt(600),
    /** true lets a production start use a test-mode Stripe key (sk_test_/rk_test_); refused otherwise. */
    PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION: envFields.bool(false),
    /** true lets a development start use a live-mode Stripe key (sk_live_/rk_live_); refused otherwise. */
    PAYMENT_ALLOW_LIVE_KEY_IN_DEVELOPMENT: envFields.bool(false),
    /**
     * Days a processed webhook event id is kept for de-duplication; the reconciliation job
     * prunes older ones. Above Stripe's 30 days of event history, so a replay is always recognised.
     */
    PAYMENT_WEBHOOK_EVENT_RETENTION_DAYS: z.coerce.number().int().min(31).max(3650).default(45),
    /** Customers one reconciliation run re-reads from Stripe; the next run continues after the last one. */
    PAYMENT_RECONCILE_BACKFILL_BATCH: envFields.positiveInt(500),
    /** Usage billing (docs/billing.md): `name=stripe_event_name` pairs, comma-separated; unset -> usage endpoint answers 503. */
    PAYMENT_USAGE_METERS: envFields.list().optional(),
    /** Meter name used for events that name none; defaults to the first of PAYMENT_USAGE_METERS. */
    PAYMENT_USAGE_DEFAULT_METER: z.string().optional(),
    /**
     * How far an event's timestamp may be ahead of payment's clock (a caller's clock running fast).
     * Stripe takes timestamps at most 5 minutes ahead: an event further ahead waits in the outbox until
     * it is not. Beyond this the event is refused (`timestamp_in_future`).
     */
    PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(3600).default(600),
    /**
     * `meter=currency` pairs (`cost=usd`): the prices on that meter must be in that currency (billing by
     * cost: the gateway's AI_COST_CURRENCY). Checked at start and on every subscription change; usage
     * whose only price has another currency is held `unbillable`, never sent.
     */
    PAYMENT_USAGE_METER_CURRENCIES: envFields.list().optional(),
    /**
     * After a billing period ends, how long its usage is still sent (Stripe finalizes the period's
     * invoice after its finalization grace, 1 hour by default). Later usage of that period is `late`.
     */
    PAYMENT_USAGE_INVOICE_GRACE_SECONDS: envFields.positiveInt(3000),
    /** `off` stops this process from draining the usage outbox to Stripe (ingest still works). */
    PAYMENT_USAGE_SENDER: z.enum(['on', 'off']).default('on'),
    /** Rows one sender claims at a time. */
    PAYMENT_USAGE_SENDER_BATCH: envFields.positiveInt(100),
    /** Pause between polls while the outbox has nothing due. */
    PAYMENT_USAGE_SENDER_IDLE_MS: envFields.positiveInt(1000),
    /** Meter event calls per second of one process; keep processes x this under Stripe's ~1,000/s. */
    PAYMENT_USAGE_SENDER_RATE_PER_SECOND: envFields.positiveInt(100),
    /** Customer+meter groups sent in parallel by one process (each group one call at a time). */
    PAYMENT_USAGE_SENDER_CONCURRENCY: envFields.positiveInt(8),
    /** How long a claimed row stays reserved for its sender; a crashed sender's rows are taken after it. */
    PAYMENT_USAGE_SENDER_LEASE_SECONDS: envFields.positiveInt(60),
    /** First retry delay after a 429/5xx/network error; doubles per attempt with jitter up to the max. */
    PAYMENT_USAGE_RETRY_BASE_MS: envFields.positiveInt(1000),
    PAYMENT_USAGE_RETRY_MAX_MS: envFields.positiveInt(300_000),
    /** Signing secret of the thin-event destination (POST /webhooks/stripe/events); unset -> 503. */
    STRIPE_EVENT_DESTINATION_SECRET: z.string().startsWith('whsec_').optional(),
    /** Express `trust proxy`: number of proxy hops in front of the service. */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(5).default(0),
  })
  .superRefine((env, ctx) => {
    const keyMode =
      env.STRIPE_SECRET_KEY.startsWith('sk_live_') || env.STRIPE_SECRET_KEY.startsWith('rk_live_')
        ? 'live'
        : 'test';
    if (env.NODE_ENV === 'production' && keyMode === 'test' && !env.PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION)
      ctx.addIssue({
        code: 'custom',
        path: ['STRIPE_SECRET_KEY'],
        message: 'a test-mode key in production; set PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION=true if intended',
      });
    if (env.NODE_ENV === 'development' && keyMode === 'live' && !env.PAYMENT_ALLOW_LIVE_KEY_IN_DEVELOPMENT)
      ctx.addIssue({
        code: 'custom',
        path: ['STRIPE_SECRET_KEY'],
        message: 'a live-mode key in development; set PAYMENT_ALLOW_LIVE_KEY_IN_DEVELOPMENT=true if intended',
      });
    if (env.NODE_ENV !== 'production') return;
    if (!env.DATABASE_URL)
      ctx.addIssue({ code: 'custom', path: ['DATABASE_URL'], message: 'required in production' });
    if (!env.REDIS_URL)
      ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'required in production' });
  });

export type PaymentEnv = z.infer<typeof ZPaymentEnv> & {
  /**
   * The standard OTEL_* variables (OpenTelemetry's own names, read by its SDK):
   * traces are on when they name an exporter endpoint (docs/observability.md).
   */
  OTEL?: Readonly<Record<string, string>>;
};

export function loadPaymentEnv(source: Record<string, string | undefined> = process.env): PaymentEnv {
  return { ...parseEnv(ZPaymentEnv, source), OTEL: otelVariablesOf(source) };
}
