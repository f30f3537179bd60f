import { Counter, type Registry } from '@platform/logging';
import type { ProviderCredential } from './providers';
import type { AttemptOutcome } from './upstream-errors';

/** Outcomes that say the target itself is unhealthy (not the request, not our quota). */
const TRIPPING: ReadonlySet<AttemptOutcome> = new Set(['timeout', 'connection_error', 'server_error']);

/**
 * Remembers, per provider and key, a target that just timed out, refused the
 * connection or answered 5xx, so the next requests skip it for `cooldownMs`
 * instead of waiting for it again. After the cooldown one request tries it
 * (half-open): success closes the circuit, another failure opens it again.
 * In-process state: each instance learns on its own, which costs one failed
 * attempt per instance.
 */
export type CircuitBreaker = {
  /** True while the target is cooling down; a half-open probe is let through once. */
  isOpen(credential: ProviderCredential, now?: number): boolean;
  /** Milliseconds until the earliest of these targets may be tried again. */
  retryAfterMs(credentials: ProviderCredential[], now?: number): number;
  record(credential: ProviderCredential, outcome: AttemptOutcome, now?: number): void;
};

export type CircuitBreakerOptions = { cooldownMs: number; registry?: Registry };

export function createCircuitBreaker(opts: CircuitBreakerOptions): CircuitBreaker {
  /**
   * Credential id (provider and key, so one user's dead BYOK key never blocks
   * the server key) -> time the cooldown ends; a probe in flight moves it
   * forward by one cooldown.
   */
  const openUntil = new Map<string, number>();
  const registers = opts.registry ? [opts.registry] : [];
  const opened = new Counter({
    name: 'ai_circuit_opened_total',
    help: 'Upstream targets taken out of rotation for a cooldown after a timeout, connection error or 5xx, by provider',
    labelNames: ['provider'] as const,
    registers,
  });
  const skipped = new Counter({
    name: 'ai_circuit_skipped_total',
    help: 'Upstream attempts skipped because the target was cooling down, by provider',
    labelNames: ['provider'] as const,
    registers,
  });
  return {
    isOpen(credential, now = Date.now()) {
      const until = openUntil.get(credential.id);
      if (until === undefined) return false;
      if (now >= until) {
        // Half-open: this request probes; the others keep skipping until it reports.
        openUntil.set(credential.id, now + opts.cooldownMs);
        return false;
      }
      skipped.inc({ provider: credential.provider });
      return true;
    },
    retryAfterMs(credentials, now = Date.now()) {
      const waits = credentials.map((c) => (openUntil.get(c.id) ?? now) - now);
      return Math.max(0, Math.min(...waits));
    },
    record(credential, outcome, now = Date.now()) {
      const id = credential.id;
      if (outcome === 'success') openUntil.delete(id);
      else if (TRIPPING.has(outcome)) {
        opened.inc({ provider: credential.provider });
        openUntil.set(id, now + opts.cooldownMs);
      }
    },
  };
}
