import type { Redis } from 'ioredis';
import { tickBatcher } from '../batching/tick-batcher';
import { assertRedisReachable } from '../usage/redis-reachable';
import type { BudgetCounterStore, CounterDelta } from './counter-store';

// ARGV: the smallest share admitted (ppm), the gate (1 or 0), the gate's rate
// max and window, then per budget counter: limit, need, ttl. KEYS: the budget
// counters, then with the gate the key's revocation marker and its rate
// counter. The gate first (as kv-redis's incrWindow counts a hit), then the
// budgets, all or nothing, in one atomic step.
const RESERVE_LUA = `
local n = #KEYS
if ARGV[2] == '1' then
  n = n - 2
  if redis.call('EXISTS', KEYS[n + 1]) == 1 then return {-1, 0} end
  local hits = redis.call('INCRBY', KEYS[n + 2], 1)
  local ttl = redis.call('PTTL', KEYS[n + 2])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[n + 2], ARGV[4])
    ttl = tonumber(ARGV[4])
  end
  if hits > tonumber(ARGV[3]) then return {-2, ttl} end
end
local ppm = 1000000
local limiting = 0
for i = 1, n do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  local limit = tonumber(ARGV[i * 3 + 2])
  local need = tonumber(ARGV[i * 3 + 3])
  local left = limit - used
  if left <= 0 then return {0, i - 1} end
  if need > 0 then
    local share = math.floor(left * 1000000 / need)
    if share < ppm then
      ppm = share
      limiting = i - 1
    end
  end
end
if ppm < tonumber(ARGV[1]) then return {0, limiting} end
if ppm < 1 then ppm = 1 end
for i = 1, n do
  local need = tonumber(ARGV[i * 3 + 3])
  local take = math.ceil(need * ppm / 1000000)
  redis.call('INCRBY', KEYS[i], take)
  if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], ARGV[i * 3 + 4]) end
end
return {1, ppm}
`;

// ARGV per counter: delta, ttl.
const ADJUST_LUA = `
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[i * 2 - 1])
  if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], ARGV[i * 2]) end
end
return 1
`;

type WithBudgetScripts = Redis & {
  budgetReserve(n: number, ...args: (string | number)[]): Promise<[number, number]>;
  budgetAdjust(n: number, ...args: (string | number)[]): Promise<number>;
};

/**
 * Budget counters in Redis, shared by every instance; one script call per
 * reserve, and one per event-loop turn for all the settles made in it
 * (EVALSHA, auto-pipelined with what else is sent in the same turn, such as
 * the ledger's XADD). Keys get the store's prefix.
 */
export function createRedisCounterStore(redis: Redis, prefix: string): BudgetCounterStore {
  if (!('budgetReserve' in redis)) {
    redis.defineCommand('budgetReserve', { lua: RESERVE_LUA });
    redis.defineCommand('budgetAdjust', { lua: ADJUST_LUA });
  }
  const r = redis as WithBudgetScripts;
  const k = (key: string) => prefix + key;
  // The settles of one event-loop turn go out as one script call, each counter's deltas summed
  // (one user's concurrent requests share counters): the same end state, one command for many requests.
  const adjustBatch = tickBatcher<readonly CounterDelta[]>(async (lists) => {
    const sums = new Map<string, { by: number; ttlMs: number }>();
    for (const list of lists) {
      for (const d of list) {
        const known = sums.get(d.key);
        if (known) {
          known.by += d.by;
          known.ttlMs = Math.max(known.ttlMs, d.ttlMs);
        } else sums.set(d.key, { by: d.by, ttlMs: d.ttlMs });
      }
    }
    const keys: string[] = [];
    const args: number[] = [];
    for (const [key, { by, ttlMs }] of sums) {
      if (Math.round(by) === 0) continue;
      keys.push(k(key));
      args.push(Math.round(by), Math.ceil(ttlMs));
    }
    if (keys.length > 0) await r.budgetAdjust(keys.length, ...keys, ...args);
  });
  return {
    async reserve(claims, minPpm, gate) {
      if (claims.length === 0 && !gate) return { ok: true, ppm: 1_000_000 };
      assertRedisReachable(redis);
      const keys = claims.map((c) => k(c.key));
      if (gate) keys.push(k(gate.markerKey), k(gate.rate.key));
      const args = claims.flatMap((c) => [c.limit, Math.max(0, Math.ceil(c.need)), Math.ceil(c.ttlMs)]);
      const [ok, value] = await r.budgetReserve(
        keys.length,
        ...keys,
        Math.ceil(minPpm),
        gate ? 1 : 0,
        gate?.rate.max ?? 0,
        gate?.rate.windowMs ?? 0,
        ...args,
      );
      if (ok === 1) return { ok: true, ppm: value };
      if (ok === -1) return { ok: false, gate: { refused: 'revoked' } };
      if (ok === -2) return { ok: false, gate: { refused: 'rate', resetMs: value } };
      return { ok: false, index: value };
    },
    async adjust(deltas) {
      if (!deltas.some((d) => d.by !== 0)) return;
      assertRedisReachable(redis);
      await adjustBatch(deltas);
    },
    async read(keys) {
      if (keys.length === 0) return [];
      assertRedisReachable(redis);
      const values = await redis.mget(...keys.map(k));
      return values.map((v) => Number(v ?? 0));
    },
    async seed(key, value, ttlMs) {
      assertRedisReachable(redis);
      await redis.set(k(key), Math.round(value), 'PX', Math.ceil(ttlMs));
    },
  };
}
