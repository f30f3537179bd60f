import { readFileSync } from 'node:fs';
import { OPENAI_PASSTHROUGH_PARAMS } from '@platform/contract';
import { z } from 'zod';
import { DEFAULT_LANES_CONFIG } from './default-lanes';

/** Providers reached through their OpenAI-compatible chat, image and speech APIs. */
export const OPENAI_COMPATIBLE_PROVIDERS = ['openrouter', 'groq', 'cerebras', 'google', 'openai'] as const;
/** Every upstream provider; ElevenLabs serves music and sound effects. */
export const UPSTREAM_PROVIDERS = [...OPENAI_COMPATIBLE_PROVIDERS, 'elevenlabs'] as const;
export type UpstreamProvider = (typeof UPSTREAM_PROVIDERS)[number];

/** The lane whose targets must be the three verified free models. */
export const FREE_LANE = 'free';
export const FREE_LANE_TARGET_COUNT = 3;

const ZTarget = z.strictObject({
  provider: z.enum(UPSTREAM_PROVIDERS),
  model: z.string().min(1).max(256),
});
/** One provider+model pair a lane may call, in priority order. */
export type Target = z.infer<typeof ZTarget>;

const ZTargets = z.array(ZTarget).min(1).max(8);

const ZLane = z.strictObject({
  /** The lane's preferred model; it must be the first target's model. */
  default_model: z.string().min(1),
  targets: ZTargets,
});
export type LaneConfig = z.infer<typeof ZLane>;

/** Media endpoints and the ordered targets each calls. */
export const MEDIA_KINDS = ['image', 'tts', 'music', 'soundfx'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

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
      .partialRecord(
        z.enum(UPSTREAM_PROVIDERS),
        z.strictObject({
          base_url: z.url({ protocol: /^https?$/ }).optional(),
          unsupported_params: z.array(z.enum(OPENAI_PASSTHROUGH_PARAMS)).default([]),
        }),
      )
      .default({}),
    lanes: z.record(z.string().min(1).max(64), ZLane),
    media: z.strictObject({
      image: ZTargets,
      tts: ZTargets,
      music: ZTargets,
      soundfx: ZTargets,
    }),
  })
  .superRefine((config, ctx) => {
    for (const [name, lane] of Object.entries(config.lanes)) {
      if (lane.targets[0]?.model !== lane.default_model) {
        ctx.addIssue({
          code: 'custom',
          path: ['lanes', name, 'default_model'],
          message: 'must be the model of the first target',
        });
      }
      lane.targets.forEach((t, i) => {
        if (t.provider === 'elevenlabs') {
          ctx.addIssue({
            code: 'custom',
            path: ['lanes', name, 'targets', i, 'provider'],
            message: 'elevenlabs has no chat API',
          });
        }
      });
    }
    for (const kind of ['image', 'tts'] as const) {
      config.media[kind].forEach((t, i) => {
        if (t.provider === 'elevenlabs') {
          ctx.addIssue({
            code: 'custom',
            path: ['media', kind, i],
            message: 'needs an OpenAI-compatible provider',
          });
        }
      });
    }
    for (const kind of ['music', 'soundfx'] as const) {
      config.media[kind].forEach((t, i) => {
        if (t.provider !== 'elevenlabs') {
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
  });
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
      missing.map((lane) => `lanes.${lane}: listed in AI_ALLOWED_LANES but not configured`),
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
