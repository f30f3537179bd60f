import { BUDGET_DEFAULT_ENTRY } from '@platform/contract';
import { PROVIDERS } from '@platform/contract/providers';
import { envFields, otelVariablesOf, parseEnv, serviceEnvFields } from '@platform/service-kit';
import { z } from 'zod';
import { checkSsoEnv, SSO_ENV_FIELDS } from './env-sso';

/** One AI_BUDGET_DEFAULTS entry: `scope.period.unit=limit` (budgets/rules.ts parses it). */

const { urlOf } = envFields;

/**
 * `provider=url` entries, comma-separated: a provider outside PROVIDERS
 * or a value that is not an http(s) URL is refused at start, naming the allowed
 * providers (a typo such as `grok=` used to be ignored without a word).
 */
const providerBaseUrls = () =>
  envFields
    .list()
    .default([])
    .superRefine((entries, ctx) => {
      const allowed = `allowed providers: ${PROVIDERS.join(', ')}`;
      for (const entry of entries) {
        const eq = entry.indexOf('=');
        const name = eq > 0 ? entry.slice(0, eq).trim() : '';
        if (!name) {
          ctx.addIssue({ code: 'custom', message: `each entry must be provider=url (${allowed})` });
        } else if (!(PROVIDERS as readonly string[]).includes(name)) {
          ctx.addIssue({ code: 'custom', message: `unknown provider "${name}" (${allowed})` });
        } else if (!urlOf(['http', 'https']).safeParse(entry.slice(eq + 1).trim()).success) {
          ctx.addIssue({ code: 'custom', message: `${name}: must be an http:// or https:// URL` });
        }
      }
    });

/** Comma-separated browser origins (scheme://host[:port], no path). */
const originList = () =>
  envFields
    .list()
    .default([])
    .superRefine((entries, ctx) => {
      for (const entry of entries) {
        const parsed = URL.canParse(entry) ? new URL(entry) : undefined;
        if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== entry.replace(/\/$/, '')) {
          ctx.addIssue({
            code: 'custom',
            message:
              'each entry must be an origin such as https://app.example.com (scheme, host, optional port)',
          });
        }
      }
    });

/** Every environment variable of the gateway. docs/gateway-*.md mirror this schema. */
export const ZGatewayEnv = z
  .object({
    /** NODE_ENV to REDIS_URL as every service reads them (service-kit serviceEnvFields). */
    /** Redis keeps sign-in codes, rate limits, budgets and key revocation. */
    ...serviceEnvFields({ port: 3002, dataDir: '.data/gateway' }),
    /** Express `trust proxy`: number of proxy hops in front of the service. */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(5).default(0),

    // --- identity -------------------------------------------------------------
    /** Public base URL of the gateway (magic links, allowed Origin). */
    GATEWAY_PUBLIC_URL: urlOf(['http', 'https']).default('http://localhost:3002'),
    /** Extra browser origins allowed for CORS with credentials, CSRF and redirect_url. */
    GATEWAY_CORS_ORIGINS: originList(),
    /**
     * Server secret (>= 32 bytes): peppers API-key hashes and signs magic-link state.
     * Rotating it invalidates every API key.
     */
    GATEWAY_SECRET: z.string().min(32, 'must be at least 32 characters'),
    SESSION_COOKIE_NAME: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default('gw_session'),
    SESSION_TTL_DAYS: envFields.positiveInt(30),
    /** Set false only for local plain-http development. */
    SESSION_COOKIE_SECURE: envFields.bool(true),
    MAGIC_LINK_TTL_MINUTES: envFields.positiveInt(15),
    /** smtp(s)://user:pass@host:port; unset outside production -> links are written to the log. */
    SMTP_URL: urlOf(['smtp', 'smtps']).optional(),
    MAIL_FROM: z.string().default('AI Gateway <no-reply@localhost>'),
    /** OpenID Connect sign-in, OIDC_* (env-sso.ts, docs/teams.md#single-sign-on). */
    ...SSO_ENV_FIELDS,

    /** Folder of the built web console served at `/`; unset -> the dist/ of @platform/console. */
    GATEWAY_CONSOLE_DIR: z.string().optional(),

    // --- AI -------------------------------------------------------------------
    /** Lanes a request may name. */
    AI_ALLOWED_LANES: envFields.list().default(['free', 'standard', 'premium']),
    /** Path of a JSON lanes config; unset -> the built-in default. */
    AI_LANES_CONFIG: z.string().optional(),
    /** Path of the JSON MCP gateway config (servers, limits; docs/mcp.md); unset -> no MCP servers. */
    MCP_CONFIG: z.string().optional(),
    /** Time allowed until a provider starts answering. */
    AI_UPSTREAM_TIMEOUT_MS: envFields.positiveInt(60_000),
    /** Time allowed for a whole AI request across its fallback chain; then 504 (the spec's 60 s provider time-out). */
    AI_REQUEST_DEADLINE_MS: envFields.positiveInt(60_000),
    /**
     * How long a target (provider, key, model) that timed out, could not be reached or answered
     * 5xx is skipped before one request probes it: a recovered target is used again within this.
     */
    AI_CIRCUIT_COOLDOWN_MS: envFields.positiveInt(5_000),
    /** Longest silence allowed between two stream chunks. */
    AI_STREAM_IDLE_TIMEOUT_MS: envFields.positiveInt(30_000),
    /** Interval of SSE keep-alive comments; at most 15 s so idle proxies never cut a stream. */
    AI_STREAM_KEEPALIVE_MS: z.coerce.number().int().positive().max(15_000).default(15_000),
    /**
     * Base URL overrides per provider, `name=url` comma-separated (e.g.
     * `groq=http://127.0.0.1:9000/v1,elevenlabs=http://127.0.0.1:9001`); they win
     * over the lanes config. Providers: openrouter, groq, cerebras, google, openai, elevenlabs.
     */
    AI_PROVIDER_BASE_URLS: providerBaseUrls(),
    /** Requests per minute per API key on AI endpoints. */
    AI_RATE_LIMIT_PER_MINUTE: envFields.positiveInt(120),
    /**
     * Tokens per user per UTC day: the default of the user's daily token budget.
     * 5,000,000 holds the largest request the spec allows (8 MiB of messages,
     * estimated at most ~4.3M tokens, plus max_tokens 131,072) on a fresh account.
     */
    AI_DAILY_TOKEN_BUDGET: envFields.positiveInt(5_000_000),
    /**
     * More budget defaults, `scope.period.unit=limit` comma-separated, scope
     * user|api_key|project, period daily|monthly, unit tokens|cost (micro-units
     * of AI_COST_CURRENCY), e.g. `project.monthly.cost=50000000`. A user's own
     * budget can only be lower. See docs/usage-and-budgets.md.
     */
    AI_BUDGET_DEFAULTS: envFields.list().default([]),
    /** Completion tokens a chat request without max_tokens reserves against its budgets. */
    AI_BUDGET_COMPLETION_ALLOWANCE: envFields.positiveInt(4096),
    /** ISO 4217 code of the prices in the lanes config and of every recorded cost. */
    AI_COST_CURRENCY: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
      .default('USD'),
    /**
     * Prefix of every Redis key (rate limits, budgets, the ledger stream):
     * one per deployment. Two deployments sharing a Redis under one prefix
     * would drain each other's usage records into their own databases.
     */
    REDIS_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 : _ . -')
      .default('gateway:'),
    /**
     * A production start refuses a Redis without `appendonly yes` and
     * `maxmemory-policy noeviction` (it holds the ledger backlog and the
     * budget counters) unless this says its persistence is managed elsewhere.
     */
    REDIS_PERSISTENCE_MANAGED: envFields.bool(false),
    /** Ledger entries pending this long at a consumer (a killed worker) are taken over by another. */
    USAGE_LEDGER_CLAIM_IDLE_MS: envFields.positiveInt(30_000),
    /**
     * Most bytes of usage records one process keeps in its local spool
     * (DATA_DIR/ledger-spool) while neither Redis nor Postgres takes them;
     * past it an answer whose record cannot be kept is not completed (503).
     */
    USAGE_LEDGER_SPOOL_MAX_BYTES: envFields.positiveInt(64 * 1024 * 1024),
    /**
     * Days the request log keeps each AI request (attempts, timings, tokens,
     * cost, client, error; docs/observability.md); 0 turns the request log off.
     */
    REQUEST_LOG_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(14),
    /** Days raw usage records are kept (daily sums are kept for ever). */
    USAGE_RETENTION_DAYS: envFields.positiveInt(90),
    /** Days an audit event is kept (docs/teams.md#audit-log); older ones are purged hourly. */
    AUDIT_RETENTION_DAYS: envFields.positiveInt(365),
    /** Most active API keys a team may have (docs/teams.md#key-rules); a user's own stay at 5. */
    TEAM_MAX_API_KEYS: envFields.positiveInt(50),
    /** Days a `store: true` response of /v1/responses is kept; 0 turns storing off. */
    RESPONSES_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
    /**
     * Bearer token of in-house services (the billing shipper) for
     * `GET /api/v1/usage/feed`; unset -> that endpoint answers 503.
     */
    GATEWAY_SERVICE_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    OPENROUTER_API_KEY: z.string().optional(),
    GROQ_API_KEY: z.string().optional(),
    CEREBRAS_API_KEY: z.string().optional(),
    GOOGLE_API_KEY: z.string().optional(),
    OPENAI_API_KEY: z.string().optional(),
    ANTHROPIC_API_KEY: z.string().optional(),
    ELEVENLABS_API_KEY: z.string().optional(),
    /**
     * Master keys for stored provider keys: `id:base64(32 bytes)` comma-separated,
     * the first encrypts, all decrypt (rotation).
     */
    PROVIDER_KEYS_MASTER_KEYS: envFields.list().optional(),

    // --- billing through payment and Stripe (docs/billing.md) -------------------
    /** Base URL of the payment service; with PAYMENT_API_KEY it turns usage shipping and paid lanes on. */
    PAYMENT_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** One of payment's PAYMENT_MS_API_KEY keys. */
    PAYMENT_API_KEY: z.string().min(16).optional(),
    /** `off`: this process does not ship usage (paid lanes still work). */
    BILLING_SHIPPER: z.enum(['on', 'off']).default('on'),
    /** What a usage event's value is, unless the lane says otherwise: tokens or cost in micros. */
    BILLING_QUANTITY: z.enum(['total_tokens', 'cost_micros']).default('total_tokens'),
    /** payment's meter name of events; unset -> payment's PAYMENT_USAGE_DEFAULT_METER. */
    BILLING_METER: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'a payment meter name (1 to 64 of a-z 0-9 _ - .)')
      .optional(),
    /**
     * payment's meter of media records (image, tts, music, sound effects: billed by cost) when the lanes
     * config's `media_billing` names none. Needed when the lanes bill tokens: cost never lands on a meter of tokens.
     */
    BILLING_MEDIA_METER: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'a payment meter name (1 to 64 of a-z 0-9 _ - .)')
      .optional(),
    /** `project_id=meter` pairs, comma-separated: a project's usage on its own meter (wins over the lane's). */
    BILLING_PROJECT_METERS: envFields.list().default([]),
    /**
     * `model_prefix=meter` pairs, comma-separated: tokens of a model family on their own meter (a
     * price per family), the longest matching prefix wins; over the lane's meter, under a project's.
     */
    BILLING_MODEL_METERS: envFields.list().default([]),
    /** `skip` (default): usage paid with the caller's own provider key is not billed; `bill`: it is. */
    BILLING_BYOK: z.enum(['skip', 'bill']).default('skip'),
    /** Ledger records per shipped batch (payment takes up to 1,000 events per call). */
    BILLING_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(500),
    /** Pause of the shipper once caught up. */
    BILLING_IDLE_MS: envFields.positiveInt(1000),
    /** First retry delay after a failed batch; doubles per failure with jitter, up to BILLING_RETRY_MAX_MS. */
    BILLING_RETRY_BASE_MS: envFields.positiveInt(1000),
    BILLING_RETRY_MAX_MS: envFields.positiveInt(60_000),
    /** How long the shipper lease lasts without renewal (a killed shipper is replaced after it). */
    BILLING_LEASE_SECONDS: envFields.positiveInt(30),
    /** How long a paid lane trusts payment's subscription answer (a missed webhook notice matters this long). */
    BILLING_SUBSCRIPTION_CACHE_SECONDS: envFields.positiveInt(30),
    /** Time a paid-lane request waits for payment's subscription answer before 503. */
    BILLING_SUBSCRIPTION_TIMEOUT_MS: envFields.positiveInt(2000),
  })
  .superRefine((env, ctx) => {
    if (!env.AI_BUDGET_DEFAULTS.every((entry) => BUDGET_DEFAULT_ENTRY.test(entry))) {
      ctx.addIssue({
        code: 'custom',
        path: ['AI_BUDGET_DEFAULTS'],
        message: 'entries must be scope.period.unit=limit',
      });
    }
    checkSsoEnv(env, ctx);
    if (env.NODE_ENV !== 'production') return;
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'SMTP_URL', 'PROVIDER_KEYS_MASTER_KEYS'] as const) {
      if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required in production' });
    }
  });

export type GatewayEnv = z.infer<typeof ZGatewayEnv> & {
  /**
   * Every `*_API_KEY` variable set, by name: the keys of providers the lanes
   * config adds (`providers.<name>.key_env`), which this schema cannot list.
   */
  PROVIDER_API_KEYS?: Readonly<Record<string, string>>;
  /**
   * The standard OTEL_* variables (OpenTelemetry's own names, read by its SDK):
   * traces are on when they name an exporter endpoint (docs/observability.md).
   */
  OTEL?: Readonly<Record<string, string>>;
};

/** `TOGETHER_API_KEY`, `MY_VLLM_API_KEY`: upper-case, ending in `_API_KEY` (lanes config `key_env`). */
function isProviderKeyName(name: string): boolean {
  if (!name.endsWith('_API_KEY') || name.length > 64) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
}

export function loadGatewayEnv(source: Record<string, string | undefined> = process.env): GatewayEnv {
  const keys: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value && isProviderKeyName(name)) keys[name] = value;
  }
  return { ...parseEnv(ZGatewayEnv, source), PROVIDER_API_KEYS: keys, OTEL: otelVariablesOf(source) };
}
