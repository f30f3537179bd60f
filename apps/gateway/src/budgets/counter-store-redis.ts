import type { Redis } from 'ioredis';
import { turnWriterOf } from '../batching/redis-turn-writer';
import { assertRedisReachable } from '../usage/redis-reachable';
import type { BudgetCounterStore } from './counter-store';

/**
 * Since when (ms) this Redis has kept budget counters; no expiry. Set by the
 * first reservation that finds it missing: a new Redis, or one that lost its
 * data (then every counter of a window that began earlier is rebuilt).
 */
const KEEPING_MARKER = 'budgets:keeping-since';

// KEYS: the budget counters, then with the gate the key's revocation marker
// and its rate counter, then the keeping marker (since when this Redis has
// kept counters). ARGV: the smallest share admitted (ppm), the gate (1 or 0),
// the gate's rate max and window, now (ms), then per budget counter: limit,
// need, ttl, window start. First, a counter missing inside its window while
// the marker is younger than that window was lost (a restart without AOF, an
// eviction): the call returns {-3, indices...} and changes nothing but the
// marker, and the caller rebuilds those counters from the daily sums. Then
// the gate (as kv-redis's incrWindow counts a hit), then the budgets, all or
// nothing, in one atomic step. A counter gets its expiry when this call
// creates it (a counter made elsewhere gets one there: seed, the settles),
// so an admitted request reads no TTL; a refused hit heals a rate counter
// that lost its expiry. A negative ttl is renewed on every reservation
// (CounterClaim.renewTtl).
const RESERVE_LUA = `
local n = #KEYS - 1
if ARGV[2] == '1' then n = n - 2 end
local since = redis.call('GET', KEYS[#KEYS])
if not since then
  since = ARGV[5]
  redis.call('SET', KEYS[#KEYS], since)
end
since = tonumber(since)
local values = {}
local lost = {}
for i = 1, n do
  values[i] = redis.call('GET', KEYS[i])
  if not values[i] and tonumber(ARGV[i * 4 + 5]) < since then lost[#lost + 1] = i - 1 end
end
if #lost > 0 then
  table.insert(lost, 1, -3)
  return lost
end
if ARGV[2] == '1' then
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
for i = 1, n do
  local used = tonumber(values[i] or '0')
  local limit = tonumber(ARGV[i * 4 + 2])
  local need = tonumber(ARGV[i * 4 + 3])
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
  local need = tonumber(ARGV[i * 4 + 3])
  local take = math.ceil(need * ppm / 1000000)
  redis.call('INCRBY', KEYS[i], take)
  local ttl = tonumber(ARGV[i * 4 + 4])
  if ttl < 0 then redis.call('PEXPIRE', KEYS[i], -ttl)
  elseif not values[i] then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {1, ppm}
`;

type WithBudgetScripts = Redis & {
  budgetReserve(n: number, ...args: (string | number)[]): Promise<number[]>;
};

/**
 * Budget counters in Redis, shared by every instance; one script call per
 * reserve, and the settles of one event-loop turn (each counter's deltas
 * summed) in the turn's one script call with the ledger's records
 * (batching/redis-turn-writer.ts), written with what else is sent in the same
 * turn (@platform/db redis-write-batching.ts). Keys get the store's prefix.
 */
export function createRedisCounterStore(
  redis: Redis,
  prefix: string,
  now: () => number = Date.now,
): BudgetCounterStore {
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
      keys.push(k(KEEPING_MARKER));
      const args = claims.flatMap((c) => [
        c.limit,
        Math.max(0, Math.ceil(c.need)),
        (c.renewTtl ? -1 : 1) * Math.ceil(c.ttlMs),
        c.windowStartsAt,
      ]);
      const reply = await r.budgetReserve(
        keys.length,
        ...keys,
        Math.ceil(minPpm),
        gate ? 1 : 0,
        gate?.rate.max ?? 0,
        gate?.rate.windowMs ?? 0,
        now(),
        ...args,
      );
      const [ok = 0, value = 0] = reply;
      if (ok === -3) return { ok: false, rebuild: reply.slice(1) };
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
    async rebuild(key, value, ttlMs) {
      assertRedisReachable(redis);
      await redis.set(k(key), Math.round(value), 'PX', Math.ceil(ttlMs), 'NX');
    },
  };
}
