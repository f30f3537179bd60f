import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ZLaneBilling } from '../../billing/lane-billing';
import { checkPriceDates, compilePrices, DEFAULT_PRICES, ZPriceTableInput } from '../../usage/pricing';
import { canServe, isBuiltIn } from '../providers/catalog';
import { DEFAULT_LANES_CONFIG } from './default-lanes';

/** The lane whose targets must be the three verified free models. */
export const FREE_LANE = 'free';
export const FREE_LANE_TARGET_COUNT = 3;

/**
 * A provider name: a built-in one (PROVIDERS) or one the config's `providers`
 * adds. Lower-case letters, digits and dashes, at most 32.
 */
const ZProviderName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, { message: 'lower-case letters, digits and dashes, at most 32' });

const ZTarget = z.strictObject({
  provider: ZProviderName,
  model: z.string().min(1).max(256),
  /**
   * The target continues an answer given as a trailing assistant message
   * (prefill), so a stream cut mid-answer elsewhere can be finished here.
   * Unset: the provider's default (see docs/gateway-ai.md).
   */
  accepts_prefill: z.boolean().optional(),
  /**
   * An OpenAI reasoning model (o-series, gpt-5): it takes
   * `max_completion_tokens` where chat clients send `max_tokens`, and
   * `reasoning_effort`. Requests translated from another API send those
   * only to such targets.
   */
  reasoning_model: z.boolean().optional(),
});
/** One provider+model pair a lane may call, in priority order. */
export type Target = z.infer<typeof ZTarget>;

const ZTargets = z.array(ZTarget).min(1).max(8);

/** Same-target retries before failing over (see docs/gateway-ai.md, Retry). */
const ZRetry = z.strictObject({
  /** Retries per target and request; 0 turns retrying off. */
  max_retries: z.number().int().min(0).max(3).default(1),
  /** Base wait before retrying a 5xx or a reset (jittered to 50-100 %). */
  backoff_ms: z.number().int().min(0).max(10_000).default(200),
  /** Longest 429 Retry-After honoured; longer (or none) fails over at once. */
  retry_after_max_ms: z.number().int().min(0).max(60_000).default(5_000),
});
export type RetryConfig = z.infer<typeof ZRetry>;
const DEFAULT_RETRY: RetryConfig = { max_retries: 1, backoff_ms: 200, retry_after_max_ms: 5_000 };

const ZLane = z.strictObject({
  /** The lane's preferred model; it must be the first target's model. */
  default_model: z.string().min(1),
  targets: ZTargets,
  /** Embedding models of `POST /v1/embeddings` on this lane, in fallback order (providers with embeddings). */
  embedding_targets: ZTargets.optional(),
  /** How the lane is billed through Stripe (docs/gateway-ai.md "Paid lanes"); unset -> metered. */
  billing: ZLaneBilling.optional(),
  /**
   * Streams: fail over when no content arrived within this time of the
   * attempt's start (within AI_UPSTREAM_TIMEOUT_MS and the request deadline).
   */
  first_token_timeout_ms: z.number().int().positive().max(600_000).optional(),
  /** Streams: longest silence between chunks before the answer moves on (default AI_STREAM_IDLE_TIMEOUT_MS). */
  stream_idle_timeout_ms: z.number().int().positive().max(600_000).optional(),
  /** Overrides the config-wide `retry` for this lane. */
  retry: ZRetry.optional(),
});

/** Media endpoints and the ordered targets each calls. */
export { MEDIA_KINDS, type MediaKind } from '@platform/contract';

/**
 * Models that let OpenRouter pick an arbitrary (free) model per request. The
 * free lane promises three verified models in a fixed order, so these are refused.
 */
export function isRouterModel(target: Target): boolean {
  const model = target.model.toLowerCase();
  if (model === 'auto' || model.endsWith('/auto') || model.startsWith('openrouter/')) return true;
  return target.provider === 'openrouter' && (model === 'free' || model.endsWith('/free'));
}

/** The lanes config file (AI_LANES_CONFIG), see docs/gateway-ai.md. */
export const ZLanesConfig = z
  .strictObject({
    /**
     * Per provider: a base URL override (keys always come from the environment)
     * and the OpenAI-compatible parameters it refuses; requests using one of
     * them skip its targets (see docs/gateway-ai.md, OpenAI-compatible API).
     */
    providers: z
      .record(
        ZProviderName,
        z.strictObject({
          base_url: z.url({ protocol: /^https?$/ }).optional(),
          /**
           * A provider that is not built in: the environment variable holding the
           * gateway's own key for it (ends in `_API_KEY`; callers may store their own).
           */
          key_env: z
            .string()
            .regex(/^[A-Z][A-Z0-9_]{0,54}_API_KEY$/, { message: 'an upper-case name ending in _API_KEY' })
            .optional(),
          /** How the console names it (default: the name). */
          label: z.string().min(1).max(64).optional(),
          /** Whether its chat continues a trailing assistant message; targets may override it. */
          accepts_prefill: z.boolean().optional(),
          /** Request fields its API refuses: left out of what it is sent, and named (field policy). */
          unsupported_params: z.array(z.string().min(1).max(64)).max(64).default([]),
        }),
      )
      .default({}),
    /** Same-target retries of every lane and media kind that sets none itself. */
    retry: ZRetry.default(DEFAULT_RETRY),
    lanes: z.record(z.string().min(1).max(64), ZLane),
    /**
     * `<provider>/<model>` -> its price, or its prices with `effective_from`
     * (usage/pricing.ts); merged over the defaults, a model's own entry replacing the default's.
     */
    prices: ZPriceTableInput.default({}),
    media: z.strictObject({
      image: ZTargets,
      tts: ZTargets,
      music: ZTargets,
      soundfx: ZTargets,
    }),
    /** How the media endpoints (no lane) are billed; unset -> metered. */
    media_billing: ZLaneBilling.optional(),
  })
  .superRefine((config, ctx) => {
    // Over 80 lines: every rule across the config's sections, each a few lines adding its issue to `ctx`.
    checkPriceDates(config.prices, ctx);
    for (const [name, provider] of Object.entries(config.providers)) {
      if (isBuiltIn(name)) {
        if (provider.key_env !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['providers', name, 'key_env'],
            message: `${name} is built in; its key variable is fixed`,
          });
        continue;
      }
      for (const field of ['base_url', 'key_env'] as const) {
        if (provider[field] === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['providers', name, field],
            message: 'required for a provider that is not built in',
          });
      }
    }
    const known = (provider: string) => isBuiltIn(provider) || config.providers[provider] !== undefined;
    const unknownTarget = (t: Target, path: (string | number)[]) => {
      if (known(t.provider)) return false;
      ctx.addIssue({
        code: 'custom',
        path: [...path, 'provider'],
        message: `unknown provider ${t.provider}: add it under providers with base_url and key_env`,
      });
      return true;
    };
    for (const [name, lane] of Object.entries(config.lanes)) {
      if (lane.targets[0]?.model !== lane.default_model) {
        ctx.addIssue({
          code: 'custom',
          path: ['lanes', name, 'default_model'],
          message: 'must be the model of the first target',
        });
      }
      lane.targets.forEach((t, i) => {
        if (unknownTarget(t, ['lanes', name, 'targets', i])) return;
        if (!canServe(t.provider, 'chat')) {
          ctx.addIssue({
            code: 'custom',
            path: ['lanes', name, 'targets', i, 'provider'],
            message: `${t.provider} has no chat API`,
          });
        }
      });
      lane.embedding_targets?.forEach((t, i) => {
        if (!canServe(t.provider, 'embeddings')) {
          ctx.addIssue({
            code: 'custom',
            path: ['lanes', name, 'embedding_targets', i, 'provider'],
            message: `${t.provider} has no embeddings API`,
          });
        }
      });
    }
    for (const kind of ['image', 'tts'] as const) {
      config.media[kind].forEach((t, i) => {
        if (unknownTarget(t, ['media', kind, i])) return;
        if (!canServe(t.provider, kind)) {
          ctx.addIssue({
            code: 'custom',
            path: ['media', kind, i],
            message: isBuiltIn(t.provider)
              ? 'needs an OpenAI-compatible provider'
              : 'a configured provider serves chat only',
          });
        }
      });
    }
    for (const kind of ['music', 'soundfx'] as const) {
      config.media[kind].forEach((t, i) => {
        if (unknownTarget(t, ['media', kind, i])) return;
        if (!canServe(t.provider, kind)) {
          ctx.addIssue({ code: 'custom', path: ['media', kind, i], message: 'only elevenlabs is supported' });
        }
      });
    }
    const free = config.lanes[FREE_LANE];
    if (!free) return;
    if (free.targets.length !== FREE_LANE_TARGET_COUNT) {
      ctx.addIssue({
        code: 'custom',
        path: ['lanes', FREE_LANE, 'targets'],
        message: `the free lane needs exactly ${FREE_LANE_TARGET_COUNT} verified free targets`,
      });
    }
    const seen = new Set<string>();
    free.targets.forEach((t, i) => {
      if (isRouterModel(t)) {
        ctx.addIssue({
          code: 'custom',
          path: ['lanes', FREE_LANE, 'targets', i, 'model'],
          message: `router model ${t.model} picks arbitrary models and is not allowed in the free lane`,
        });
      }
      const id = `${t.provider}/${t.model}`;
      if (seen.has(id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['lanes', FREE_LANE, 'targets', i],
          message: 'duplicate target',
        });
      }
      seen.add(id);
    });
  })
  .transform(({ prices, ...config }) => ({
    ...config,
    prices: compilePrices({ ...DEFAULT_PRICES, ...prices }),
  }));
export type LanesConfig = z.infer<typeof ZLanesConfig>;

/** Thrown at start when the lanes config is unusable; the service must not start. */
export class LanesConfigError extends Error {
  constructor(source: string, problems: string[]) {
    super(`invalid lanes config (${source}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'LanesConfigError';
  }
}

/**
 * Validates a parsed lanes config against the schema and the allowed lanes:
 * every allowed lane must be configured, so no request can reach a lane
 * without targets.
 */
export function parseLanesConfig(raw: unknown, allowedLanes: readonly string[], source: string): LanesConfig {
  const result = ZLanesConfig.safeParse(raw);
  if (!result.success) {
    throw new LanesConfigError(
      source,
      result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  }
  const missing = allowedLanes.filter((lane) => !result.data.lanes[lane]);
  if (missing.length > 0) {
    throw new LanesConfigError(
      source,
      missing.map(
        (lane) =>
          `lanes.${lane}: listed in AI_ALLOWED_LANES but not configured (configured lanes: ${Object.keys(result.data.lanes).join(', ')})`,
      ),
    );
  }
  return result.data;
}

/** Reads AI_LANES_CONFIG (or the built-in default) once at start. */
export function loadLanesConfig(path: string | undefined, allowedLanes: readonly string[]): LanesConfig {
  if (!path) return parseLanesConfig(DEFAULT_LANES_CONFIG, allowedLanes, 'built-in default');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new LanesConfigError(path, [
      `cannot read JSON: ${err instanceof Error ? err.message : String(err)}`,
    ]);
  }
  return parseLanesConfig(raw, allowedLanes, path);
}

/**
 * Targets of a lane for a request: the whole ordered chain when no model is
 * named, otherwise the targets serving that model (still in order), or null
 * when the lane does not offer it.
 */
export function selectTargets(
  targets: readonly Target[],
  model: string | undefined,
): readonly Target[] | null {
  if (model === undefined) return targets;
  const matching = targets.filter((t) => t.model === model);
  return matching.length > 0 ? matching : null;
}
