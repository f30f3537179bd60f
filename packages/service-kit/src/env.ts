import cluster from 'node:cluster';
import { z } from 'zod';
import { HEAP_SURGE_DEFAULTS } from './heap-surge';
import { databasePoolSize, parseWorkers, servingProcesses, WORKERS_HELP } from './workers';

/** Thrown by parseEnv; its message names every bad variable and why, never a value. */
export class EnvError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EnvError';
    this.problems = problems;
  }
}

/**
 * Parses an environment with a zod object schema. Values are never echoed back,
 * since several variables are secrets.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  source: Record<string, string | undefined>,
): z.infer<S> {
  // Treat empty strings as unset, as shells and compose files often produce them.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  throw new EnvError(problems);
}

/** A URL whose scheme is one of `schemes`; the message names them. */
const urlOf = (schemes: readonly string[]) =>
  z.url({
    protocol: new RegExp(`^(${schemes.join('|')})$`),
    error: `must be a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`,
  });

/** Shared building blocks for env schemas. */
export const envFields = {
  urlOf,
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  /** Comma-separated list; blanks dropped. */
  list: () =>
    z.string().transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .transform((v) => v === 'true' || v === '1' || v === 'yes')
      .default(fallback),
  nodeEnv: () => z.enum(['development', 'test', 'production']).default('development'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  url: () => z.url({ protocol: /^(https?|postgres(ql)?|rediss?|smtps?)$/ }),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  /** `WORKERS` (see ./workers): read by the cluster primary; here so a typo is reported with the rest. */
  workers: () =>
    z
      .string()
      .default('auto')
      .refine((v) => parseWorkers(v) !== undefined, WORKERS_HELP),
  /**
   * The Postgres connection budget (./workers databasePoolSize): `DATABASE_POOL_MAX`
   * per process, or `DATABASE_CONNECTION_BUDGET` for the whole service shared by
   * `SERVICE_REPLICAS` replicas x their workers.
   */
  databasePool: () => ({
    DATABASE_POOL_MAX: z.coerce.number().int().positive().max(1000).optional(),
    DATABASE_CONNECTION_BUDGET: z.coerce.number().int().positive().max(100_000).optional(),
    SERVICE_REPLICAS: z.coerce.number().int().positive().max(10_000).optional(),
  }),
};

/**
 * The variables every service reads alike, to spread first into its env schema: NODE_ENV, PORT,
 * HOST, LOG_LEVEL, WORKERS, the database pool, METRICS_TOKEN (bearer token for GET /metrics; unset
 * -> answered only to loopback clients not behind a proxy), DATABASE_URL (unset -> embedded PGlite
 * in DATA_DIR, not in production), DATA_DIR and REDIS_URL (unset -> in-process stores, one instance).
 */
export function serviceEnvFields(defaults: { port: number; dataDir: string }) {
  return {
    NODE_ENV: envFields.nodeEnv(),
    PORT: envFields.port(defaults.port),
    HOST: z.string().default('0.0.0.0'),
    LOG_LEVEL: envFields.logLevel(),
    WORKERS: envFields.workers(),
    /** DATABASE_POOL_MAX, DATABASE_CONNECTION_BUDGET, SERVICE_REPLICAS (docs/deploy.md "Connection budget"). */
    ...envFields.databasePool(),
    METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
    DATABASE_URL: urlOf(['postgres', 'postgresql']).optional(),
    DATA_DIR: z.string().default(defaults.dataDir),
    REDIS_URL: urlOf(['redis', 'rediss']).optional(),
    /**
     * How long a Redis command or a new Postgres connection may take before the
     * request that needs it is answered 503 (docs/reliability.md, "How it is done"):
     * short, so a hung dependency costs callers little; a slower network raises them.
     */
    REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(750),
    DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(1500),
    /**
     * Milliseconds after a surge of open requests before a worker compacts its heap and hands
     * the burst's pages back (heap-surge.ts, docs/deploy.md); 0 keeps them.
     */
    HEAP_COMPACT_AFTER_SURGE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(600_000)
      .default(HEAP_SURGE_DEFAULTS.compactAfterMs),
  };
}

/** The storage time-outs of a parsed env (serviceEnvFields), as openServiceStorage takes them. */
export function storageTimeouts(env: {
  REDIS_COMMAND_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
}): {
  redisCommandTimeoutMs: number;
  databaseConnectTimeoutMs: number;
} {
  return {
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    databaseConnectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
  };
}

/**
 * Runs an env loader; on EnvError prints which variables are bad and exits 1.
 * In a cluster worker the EnvError is thrown on to startService, which hands
 * the message to the primary (one report for all workers).
 */
export function loadEnvOrExit<T>(service: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof EnvError) || cluster.isWorker) throw err;
    process.stderr.write(`${service}: ${err.message}\n`);
    process.exit(1);
  }
}

/**
 * This process's Postgres pool size from a parsed env (envFields.databasePool):
 * its share of the service's connection budget, given the replica's workers.
 */
export function databasePoolMax(env: {
  WORKERS: string;
  DATABASE_POOL_MAX?: number;
  DATABASE_CONNECTION_BUDGET?: number;
  SERVICE_REPLICAS?: number;
}): number {
  return databasePoolSize({
    poolMax: env.DATABASE_POOL_MAX,
    budget: env.DATABASE_CONNECTION_BUDGET,
    replicas: env.SERVICE_REPLICAS,
    workers: servingProcesses({ WORKERS: env.WORKERS }, cluster.isWorker),
  });
}
