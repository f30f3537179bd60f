import type { Clock } from '@platform/service-kit';

/**
 * A circuit breaker per MCP server: after `failures` consecutive failures
 * (unreachable, timed out, malformed answers; not a tool's own error result)
 * the server is skipped for `cooldownMs`: calls get an MCP error at once
 * and listings leave it out, instead of every client waiting for it. Then one
 * call probes it: success closes the circuit, failure opens it again.
 * In-process state: each instance learns on its own.
 */
export type ServerBreaker = {
  /** True while calls to the server must not be tried (a probe is let through once per cooldown). */
  isOpen(server: string): boolean;
  record(server: string, ok: boolean): void;
};

export function createServerBreaker(opts: {
  failures: number;
  cooldownMs: number;
  clock: Clock;
}): ServerBreaker {
  const state = new Map<string, { failures: number; openUntil: number }>();
  return {
    isOpen(server) {
      const s = state.get(server);
      if (!s || s.failures < opts.failures) return false;
      const now = opts.clock();
      if (now < s.openUntil) return true;
      // Half-open: this caller probes; the others keep skipping for one more cooldown.
      s.openUntil = now + opts.cooldownMs;
      return false;
    },
    record(server, ok) {
      if (ok) {
        state.delete(server);
        return;
      }
      const s = state.get(server) ?? { failures: 0, openUntil: 0 };
      s.failures += 1;
      if (s.failures >= opts.failures) s.openUntil = opts.clock() + opts.cooldownMs;
      state.set(server, s);
    },
  };
}
