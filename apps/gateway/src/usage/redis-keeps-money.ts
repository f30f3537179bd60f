import type { Logger } from '@platform/logging';
import type { Redis } from 'ioredis';

/** The two settings that decide whether Redis keeps the ledger backlog and the budget counters. */
export type RedisMoneySettings = {
  appendonly: string | undefined;
  maxmemoryPolicy: string | undefined;
  /** Where they were read: CONFIG GET, or INFO where a managed Redis disables CONFIG. */
  source: 'CONFIG' | 'INFO';
};

/** `field:value` of an INFO section (lines split by CRLF), without a regular expression. */
function infoField(info: string, field: string): string | undefined {
  for (const line of info.split('\n')) {
    if (line.startsWith(`${field}:`)) return line.slice(field.length + 1).trim();
  }
  return undefined;
}

/** Reads appendonly and maxmemory-policy: CONFIG GET, else INFO persistence and memory. */
export async function readRedisMoneySettings(redis: Redis): Promise<RedisMoneySettings> {
  try {
    const [aof, policy] = (await Promise.all([
      redis.config('GET', 'appendonly'),
      redis.config('GET', 'maxmemory-policy'),
    ])) as [string[], string[]];
    if (aof[1] !== undefined && policy[1] !== undefined)
      return { appendonly: aof[1], maxmemoryPolicy: policy[1], source: 'CONFIG' };
  } catch {
    // CONFIG disabled or renamed (managed Redis): INFO says the same.
  }
  const [persistence, memory] = await Promise.all([redis.info('persistence'), redis.info('memory')]);
  const aofEnabled = infoField(persistence, 'aof_enabled');
  return {
    appendonly: aofEnabled === undefined ? undefined : aofEnabled === '1' ? 'yes' : 'no',
    maxmemoryPolicy: infoField(memory, 'maxmemory_policy'),
    source: 'INFO',
  };
}

/** What is wrong with the settings for money, one sentence per setting; empty when nothing is. */
export function redisMoneyProblems(s: RedisMoneySettings): string[] {
  const problems: string[] = [];
  if (s.appendonly !== 'yes')
    problems.push(
      `appendonly is ${s.appendonly ?? 'unknown'} (needs yes: without it a restart loses the usage ledger's backlog and resets every budget counter)`,
    );
  if (s.maxmemoryPolicy !== 'noeviction')
    problems.push(
      `maxmemory-policy is ${s.maxmemoryPolicy ?? 'unknown'} (needs noeviction: an evicted budget counter or ledger entry is money lost)`,
    );
  return problems;
}

/**
 * The production start's check of the Redis it is given (docs/usage-and-budgets.md,
 * "Redis requirements"): throws, naming each setting, unless `managed` says the
 * store's persistence is managed elsewhere (REDIS_PERSISTENCE_MANAGED), in which
 * case it only warns.
 */
export async function assertRedisKeepsMoney(
  redis: Redis,
  opts: { managed: boolean; logger: Logger },
): Promise<void> {
  const settings = await readRedisMoneySettings(redis);
  const problems = redisMoneyProblems(settings);
  if (problems.length === 0) return;
  if (opts.managed) {
    opts.logger.warn(
      { problems, source: settings.source },
      'Redis settings do not keep money; REDIS_PERSISTENCE_MANAGED=true says its persistence is managed elsewhere',
    );
    return;
  }
  throw new Error(
    `Redis at REDIS_URL does not keep money: ${problems.join('; ')} (read with ${settings.source}). ` +
      'Set them (redis.conf, or CONFIG SET and CONFIG REWRITE), or set REDIS_PERSISTENCE_MANAGED=true ' +
      "if the store's persistence and eviction are managed elsewhere.",
  );
}
