import type { Redis } from 'ioredis';
import { turnWriterOf } from '../batching/redis-turn-writer';
import { assertRedisReachable } from '../usage/redis-reachable';
import type { BudgetCounterStore } from './counter-store';

// ARGV: the smallest share admitted (ppm), the gate (1 or 0), the gate's rate
// max and window, then per budget counter: limit, need, ttl. KEYS: the budget
// counters, then with the gate the key's revocation marker and its rate
// counter. The gate first (as kv-redis's incrWindow counts a hit), then the
// budgets, all or nothing, in one atomic step. A counter gets its expiry when
// this call creates it (a counter made elsewhere gets one there: seed, the
// settles), so an admitted request reads no TTL; a refused hit heals a rate
// counter that lost its expiry.
const RESERVE_LUA = `
local n = #KEYS
if ARGV[2] == '1' then
  n = n - 2
  if redis.call('EXISTS', KEYS[n + 1]) == 1 then return {-1, 0} end
  local hits = redis.call('INCRBY', KEYS[n + 2], 1)
  if hits == 1 then redis.call('PEXPIRE', KEYS[n + 2], ARGV[4]) end
  if hits > tonumber(ARGV[3]) then
    local ttl = redis.call('PTTL', KEYS[n + 2])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[n + 2], ARGV[4])
      ttl = tonumber(ARGV[4])
    end
    return {-2, ttl}
  end
end
local ppm = 1000000
local limiting = 0
local absent = {}
for i = 1, n do
  local value = redis.call('GET', KEYS[i])
  absent[i] = not value
  local used = tonumber(value or '0')
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
  if absent[i] then redis.call('PEXPIRE', KEYS[i], ARGV[i * 3 + 4]) end
end
return {1, ppm}
`;

type WithBudgetScripts = Redis & {
  budgetReserve(n: number, ...args: (string | number)[]): Promise<[number, number]>;
};

/**
 * Budget counters in Redis, shared by every instance; one script call per
 * reserve, and the settles of one event-loop turn (each counter's deltas
 * summed) in the turn's one script call with the ledger's records
 * (batching/redis-turn-writer.ts), auto-pipelined with what else is sent in
 * the same turn. Keys get the store's prefix.
 */
export function createRedisCounterStore(redis: Redis, prefix: string): BudgetCounterStore {
  if (!('budgetReserve' in redis)) redis.defineCommand('budgetReserve', { lua: RESERVE_LUA });
  const r = redis as WithBudgetScripts;
  const k = (key: string) => prefix + key;
  const turns = turnWriterOf(redis);
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
      await turns.adjust(deltas.map((d) => ({ key: k(d.key), by: d.by, ttlMs: d.ttlMs })));
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
