import type { WindowCounter } from '@platform/service-kit';
import type { BudgetCounterStore } from './counter-store';
import { reservedOf } from './counter-store';

/**
 * Budget counters in this process (embedded mode): the same rules as the Lua
 * script, synchronously. A reservation's gate is checked on `kv` (the
 * revocation marker and the rate counter live there), before the budgets.
 */
export function createMemoryCounterStore(
  now: () => number = Date.now,
  kv?: { get(key: string): Promise<string | null> } & WindowCounter,
): BudgetCounterStore {
  const counters = new Map<string, { value: number; expiresAt: number }>();
  // Counters older than this process were lost with the last one (see ReserveResult.rebuild).
  const keepingSince = now();
  const currentOf = (key: string) => {
    const c = counters.get(key);
    if (!c) return 0;
    if (c.expiresAt <= now()) {
      counters.delete(key);
      return 0;
    }
    return c.value;
  };
  const add = (key: string, by: number, ttlMs: number) => {
    const value = currentOf(key) + by;
    const c = counters.get(key);
    if (c) c.value = value;
    else counters.set(key, { value, expiresAt: now() + ttlMs });
  };
  return {
    async reserve(claims, minPpm, gate) {
      const lost = claims.flatMap((c, i) =>
        c.windowStartsAt < keepingSince && currentOf(c.key) === 0 && !counters.has(c.key) ? [i] : [],
      );
      if (lost.length > 0) return { ok: false, rebuild: lost };
      if (gate) {
        if (!kv) throw new Error('a gated reservation needs the key-value store');
        if ((await kv.get(gate.markerKey)) !== null) return { ok: false, gate: { refused: 'revoked' } };
        const rate = await kv.incrWindow(gate.rate.key, 1, gate.rate.windowMs);
        if (rate.total > gate.rate.max)
          return { ok: false, gate: { refused: 'rate', resetMs: rate.resetMs } };
      }
      let ppm = 1_000_000;
      let limiting = 0;
      for (const [index, claim] of claims.entries()) {
        const left = claim.limit - currentOf(claim.key);
        if (left <= 0) return { ok: false, index };
        if (claim.need > 0) {
          const share = Math.floor((left * 1_000_000) / claim.need);
          if (share < ppm) {
            ppm = share;
            limiting = index;
          }
        }
      }
      if (ppm < minPpm) return { ok: false, index: limiting };
      ppm = Math.max(ppm, 1);
      for (const claim of claims) {
        add(claim.key, reservedOf(claim.need, ppm), claim.ttlMs);
        const c = claim.renewTtl ? counters.get(claim.key) : undefined;
        if (c) c.expiresAt = now() + claim.ttlMs;
      }
      return { ok: true, ppm };
    },
    async adjust(deltas) {
      for (const d of deltas) add(d.key, d.by, d.ttlMs);
    },
    async read(keys) {
      return keys.map(currentOf);
    },
    async seed(key, value, ttlMs) {
      counters.set(key, { value, expiresAt: now() + ttlMs });
    },
    async rebuild(key, value, ttlMs) {
      if (currentOf(key) === 0 && !counters.has(key)) counters.set(key, { value, expiresAt: now() + ttlMs });
    },
  };
}
