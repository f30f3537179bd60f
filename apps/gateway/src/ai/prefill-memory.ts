import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Target } from './config/lanes';

/**
 * How long the cluster remembers that a target refused an assistant prefill
 * (the Redis key's TTL): a week, so a provider that changes its mind is tried
 * again, and a mistaken entry fades. Each process keeps what it learned or
 * read for its whole life (docs/gateway-ai.md, "Learned capabilities").
 */
export const PREFILL_REFUSAL_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The key-value store key of a learned refusal (the store adds its own prefix). */
export function prefillRefusalKey(target: Pick<Target, 'provider' | 'model'>): string {
  return `ai:prefill-refused:${target.provider}/${target.model}`;
}

/**
 * Targets learned to refuse prefill: a static `accepts_prefill` can be wrong
 * (the newest Anthropic models refuse it), and a refusal seen once holds for
 * the cluster. Read only when a stream needs continuing, never on the way of
 * a normal answer.
 */
export type PrefillMemory = {
  /** Whether `target` is known to refuse prefill, here or (one store read) anywhere in the cluster. */
  refuses(target: Target): Promise<boolean>;
  /** Remembers a refusal here at once and in the store for PREFILL_REFUSAL_TTL_MS; logs it once per process. */
  learn(target: Target, reason: string | null): Promise<void>;
};

export function createPrefillMemory(opts: {
  kv: Pick<KeyValueStore, 'get' | 'set'> | null;
  logger: Logger;
  ttlMs?: number;
}): PrefillMemory {
  const known = new Set<string>();
  const ttlMs = opts.ttlMs ?? PREFILL_REFUSAL_TTL_MS;
  return {
    async refuses(target) {
      const key = prefillRefusalKey(target);
      if (known.has(key)) return true;
      if (!opts.kv) return false;
      // A store that cannot answer leaves the static flag in charge: the attempt itself will tell.
      const stored = await opts.kv.get(key).catch(() => null);
      if (stored === null) return false;
      known.add(key);
      return true;
    },
    async learn(target, reason) {
      const key = prefillRefusalKey(target);
      if (known.has(key)) return;
      known.add(key);
      opts.logger.warn(
        { provider: target.provider, model: target.model, reason, ttl_ms: ttlMs },
        'upstream refuses assistant prefill: learned, continuations go elsewhere or by instruction',
      );
      await opts.kv
        ?.set(key, reason ?? 'prefill_rejected', ttlMs)
        .catch((err: unknown) =>
          opts.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'learned prefill refusal not shared with the cluster',
          ),
        );
    },
  };
}
