/**
 * `WORKERS`: how many processes serve. `auto` (the default) is one per CPU
 * the process may use (`os.availableParallelism()`, which follows the
 * container's CPU limit); a positive integer is taken as is. Kept free of
 * imports so the cluster primary can parse it without loading anything.
 */
export type WorkersSetting = 'auto' | number;

export const WORKERS_HELP = 'WORKERS must be "auto" or a positive integer';

/** The parsed setting, or undefined when it is neither `auto` nor a positive integer. */
export function parseWorkers(value: string | undefined): WorkersSetting | undefined {
  const v = value?.trim() ?? '';
  if (v === '' || v === 'auto') return 'auto';
  if (!/^[1-9][0-9]{0,3}$/.test(v)) return undefined;
  return Number(v);
}

/**
 * The Postgres connections a whole service may hold, over all its replicas and
 * their workers, when `DATABASE_CONNECTION_BUDGET` is unset. Two services at
 * this default stay well inside Postgres' `max_connections` of 100, with room
 * for the migrate jobs, backups and an operator's psql (docs/deploy.md).
 */
export const DEFAULT_CONNECTION_BUDGET = 20;

/** A transaction holds one connection while a query outside it may need another. */
export const MIN_POOL_SIZE = 2;

export type PoolSizing = {
  /** `DATABASE_POOL_MAX`: an explicit pool size per process; wins over the budget. */
  poolMax?: number;
  /** `DATABASE_CONNECTION_BUDGET`: connections for the whole service (every replica, every worker). */
  budget?: number;
  /** `SERVICE_REPLICAS`: most replicas running at once (autoscaler maximum plus rollout surge); default 1. */
  replicas?: number;
  /** Serving processes in one replica (the resolved `WORKERS`). */
  workers: number;
};

/**
 * Each serving process's pool size: the budget shared evenly by replicas x
 * workers, rounded down so the total never exceeds it, and at least
 * MIN_POOL_SIZE (a budget under 2 per process cannot be kept: docs/deploy.md).
 */
export function databasePoolSize(s: PoolSizing): number {
  if (s.poolMax !== undefined) return s.poolMax;
  const processes = Math.max(1, s.replicas ?? 1) * Math.max(1, s.workers);
  return Math.max(MIN_POOL_SIZE, Math.floor((s.budget ?? DEFAULT_CONNECTION_BUDGET) / processes));
}

/**
 * The serving processes of this replica, as seen from inside one of them: the
 * cluster primary hands its resolved count to each worker in `WORKERS`; a
 * single process is one.
 */
export function servingProcesses(env: Record<string, string | undefined>, isWorker: boolean): number {
  if (!isWorker) return 1;
  const n = parseWorkers(env.WORKERS);
  return typeof n === 'number' ? n : 1;
}
