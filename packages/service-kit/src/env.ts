import cluster from 'node:cluster';
import { z } from 'zod';
import { parseWorkers, WORKERS_HELP } from './workers';

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

/** Shared building blocks for env schemas. */
export const envFields = {
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
};

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
