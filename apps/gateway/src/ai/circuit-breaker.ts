import { Counter, Gauge, type Registry } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import { lruCache } from '../cache/lru';
import type { ProviderCredential } from './providers/registry';
import type { AttemptOutcome } from './providers/upstream-errors';

/** Outcomes that say the target itself is unhealthy (not the request, not our quota). */
const TRIPPING: ReadonlySet<AttemptOutcome> = new Set(['timeout', 'connection_error', 'server_error']);

/** One target as the breaker knows it: which key at which provider, for which model. */
export type BreakerTarget = { credential: ProviderCredential; model: string };

/**
 * Remembers, per provider, key and model, a target that just timed out,
 * could not be reached or answered 5xx (after its retries), so the next
 * requests skip it for `cooldownMs` instead of waiting for it again. One
 * failing model never blocks another model of the same provider, and one
 * user's dead BYOK key never blocks the server key. After the cooldown one
 * request tries it (half-open probe): success closes the circuit, another
 * failure opens it again; the other requests keep skipping it while the
 * probe runs. A recovered target is thus used again at most one cooldown
 * (AI_CIRCUIT_COOLDOWN_MS, a few seconds by default) after it recovered.
 * In-process state: each instance learns on its own, which costs one failed
 * attempt per instance.
 */
export type CircuitBreaker = {
  /** True while the target is cooling down; a half-open probe is let through once. */
  isOpen(credential: ProviderCredential, model: string): boolean;
  /** Milliseconds until the earliest of these targets may be tried again. */
  retryAfterMs(targets: BreakerTarget[]): number;
  record(credential: ProviderCredential, model: string, outcome: AttemptOutcome): void;
};

export type CircuitBreakerOptions = { cooldownMs: number; clock: Clock; registry?: Registry };

/** Bounds the targets remembered as failing (BYOK keys times models); the least recent go first. */
const MAX_TRACKED = 10_000;

export function createCircuitBreaker(opts: CircuitBreakerOptions): CircuitBreaker {
  /** `<credential id>|<model>` -> time the cooldown ends; a probe in flight moves it forward by one cooldown. */
  const openUntil = lruCache<string, number>({ max: MAX_TRACKED });
  const keyOf = (credential: ProviderCredential, model: string) => `${credential.id}|${model}`;
  const registers = opts.registry ? [opts.registry] : [];
  /** A counter of events per target (provider and model). */
  const targetCounter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['provider', 'model'] as const, registers });
  const opened = targetCounter(
    'ai_circuit_opened_total',
    'Upstream targets taken out of rotation for a cooldown after a timeout, connection error or 5xx, by provider and model',
  );
  const skipped = targetCounter(
    'ai_circuit_skipped_total',
    'Upstream attempts skipped because the target was cooling down, by provider and model',
  );
  const probes = targetCounter(
    'ai_circuit_probes_total',
    'Half-open probes: one request let through to a target after its cooldown, by provider and model',
  );
  const open = new Gauge({
    name: 'ai_circuit_open',
    help: 'Targets whose circuit is open or half-open (1) or closed (0), by provider and model (server keys only)',
    labelNames: ['provider', 'model'] as const,
    registers,
  });
  // The gauge follows server keys only: a label per BYOK key would leak their count per user.
  const setGauge = (credential: ProviderCredential, model: string, value: 0 | 1) => {
    if (!credential.byok) open.set({ provider: credential.provider, model }, value);
  };
  return {
    isOpen(credential, model) {
      const now = opts.clock();
      const key = keyOf(credential, model);
      const until = openUntil.get(key);
      if (until === undefined) return false;
      if (now >= until) {
        // Half-open: this request probes; the others keep skipping until it reports.
        openUntil.set(key, now + opts.cooldownMs);
        probes.inc({ provider: credential.provider, model });
        return false;
      }
      skipped.inc({ provider: credential.provider, model });
      return true;
    },
    retryAfterMs(targets) {
      const now = opts.clock();
      const waits = targets.map((t) => (openUntil.get(keyOf(t.credential, t.model)) ?? now) - now);
      return Math.max(0, Math.min(...waits));
    },
    record(credential, model, outcome) {
      const now = opts.clock();
      const key = keyOf(credential, model);
      if (outcome === 'success') {
        if (openUntil.delete(key)) setGauge(credential, model, 0);
      } else if (TRIPPING.has(outcome)) {
        opened.inc({ provider: credential.provider, model });
        openUntil.set(key, now + opts.cooldownMs);
        setGauge(credential, model, 1);
      }
    },
  };
}
