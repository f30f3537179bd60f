import { envFields, parseEnv } from '@platform/service-kit';
import { z } from 'zod';

/** Every environment variable of the gateway. docs/gateway-*.md mirror this schema. */
export const ZGatewayEnv = z
  .object({
    NODE_ENV: envFields.nodeEnv(),
    PORT: envFields.port(3002),
    HOST: z.string().default('0.0.0.0'),
    LOG_LEVEL: envFields.logLevel(),
    WORKERS: envFields.workers(),
    /** Postgres connection URL; unset -> embedded PGlite in DATA_DIR (not in production). */
    DATABASE_URL: envFields.url().optional(),
    DATA_DIR: z.string().default('.data/gateway'),
    /** Redis URL (codes, rate limits, budgets, revocation); unset -> in-process stores (single instance). */
    REDIS_URL: envFields.url().optional(),
    /** Express `trust proxy`: number of proxy hops in front of the service. */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(5).default(0),

    // --- identity -------------------------------------------------------------
    /** Public base URL of the gateway (magic links, allowed Origin). */
    GATEWAY_PUBLIC_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3002'),
    /** Extra browser origins allowed for CORS with credentials, CSRF and redirect_url. */
    GATEWAY_CORS_ORIGINS: envFields.list().default([]),
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
    SMTP_URL: envFields.url().optional(),
    MAIL_FROM: z.string().default('AI Gateway <no-reply@localhost>'),

    /** Folder of the built web console served at `/`; unset -> the dist/ of @platform/console. */
    GATEWAY_CONSOLE_DIR: z.string().optional(),

    // --- AI -------------------------------------------------------------------
    /** Lanes a request may name. */
    AI_ALLOWED_LANES: envFields.list().default(['free', 'standard', 'premium']),
    /** Path of a JSON lanes config; unset -> the built-in default. */
    AI_LANES_CONFIG: z.string().optional(),
    /** Time allowed until a provider starts answering. */
    AI_UPSTREAM_TIMEOUT_MS: envFields.positiveInt(60_000),
    /** Time allowed for a whole AI request across its fallback chain; then 504 (the spec's 60 s provider time-out). */
    AI_REQUEST_DEADLINE_MS: envFields.positiveInt(60_000),
    /** How long a target that timed out, refused the connection or answered 5xx is skipped. */
    AI_CIRCUIT_COOLDOWN_MS: envFields.positiveInt(30_000),
    /** Longest silence allowed between two stream chunks. */
    AI_STREAM_IDLE_TIMEOUT_MS: envFields.positiveInt(30_000),
    /** Interval of SSE keep-alive comments; at most 15 s so idle proxies never cut a stream. */
    AI_STREAM_KEEPALIVE_MS: z.coerce.number().int().positive().max(15_000).default(15_000),
    /**
     * Base URL overrides per provider, `name=url` comma-separated (e.g.
     * `groq=http://127.0.0.1:9000/v1,elevenlabs=http://127.0.0.1:9001`); they win
     * over the lanes config. Providers: openrouter, groq, cerebras, google, openai, elevenlabs.
     */
    AI_PROVIDER_BASE_URLS: envFields.list().default([]),
    /** Requests per minute per API key on AI endpoints. */
    AI_RATE_LIMIT_PER_MINUTE: envFields.positiveInt(120),
    /** Tokens per user per UTC day (preview limit). */
    AI_DAILY_TOKEN_BUDGET: envFields.positiveInt(1_000_000),
    OPENROUTER_API_KEY: z.string().optional(),
    GROQ_API_KEY: z.string().optional(),
    CEREBRAS_API_KEY: z.string().optional(),
    GOOGLE_API_KEY: z.string().optional(),
    OPENAI_API_KEY: z.string().optional(),
    ELEVENLABS_API_KEY: z.string().optional(),
    /**
     * Master keys for stored provider keys: `id:base64(32 bytes)` comma-separated,
     * the first encrypts, all decrypt (rotation).
     */
    PROVIDER_KEYS_MASTER_KEYS: envFields.list().optional(),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production') return;
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'SMTP_URL', 'PROVIDER_KEYS_MASTER_KEYS'] as const) {
      if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required in production' });
    }
  });

export type GatewayEnv = z.infer<typeof ZGatewayEnv>;

export function loadGatewayEnv(source: Record<string, string | undefined> = process.env): GatewayEnv {
  return parseEnv(ZGatewayEnv, source);
}
