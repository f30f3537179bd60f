import cluster, { type Worker } from 'node:cluster';
import { serveClusterMetrics } from '@platform/logging/cluster-metrics';
import { usableCpus } from './cpu-limit';
import { SHUTDOWN_MESSAGE, STOP_DEADLINE_MS } from './server';
import { START_FAILED, type StartFailedMessage, startService } from './start-service';
import { parseWorkers, WORKERS_HELP } from './workers';

/**
 * The process layout of a service: one process (today's), or a primary that
 * forks `WORKERS` workers with node:cluster, each running the unchanged server.
 * The primary only forks, forwards signals, replaces crashed workers and sums
 * /metrics; it loads node built-ins and prom-client, never the app. Imported
 * as `@platform/service-kit/cluster` (the package index would load Express).
 */

export type ProcessPlan = { mode: 'single'; warning?: string } | { mode: 'cluster'; workers: number };

/**
 * Several workers need shared state: with the embedded database (PGlite is one
 * process's folder) or the in-memory key-value store, each worker would have
 * its own, so those run one process whatever WORKERS says.
 */
export function planProcesses(
  env: Record<string, string | undefined>,
  cpus: () => number = () => usableCpus(),
): ProcessPlan {
  const setting = parseWorkers(env.WORKERS);
  if (setting === undefined) throw new Error(WORKERS_HELP);
  const workers = setting === 'auto' ? cpus() : setting;
  const embedded = [!env.DATABASE_URL && 'DATABASE_URL', !env.REDIS_URL && 'REDIS_URL'].filter(Boolean);
  if (embedded.length > 0) {
    if (workers <= 1) return { mode: 'single' };
    return {
      mode: 'single',
      warning: `WORKERS=${env.WORKERS ?? 'auto'} asks for ${workers} workers, but ${embedded.join(' and ')} ${embedded.length > 1 ? 'are' : 'is'} not set: the embedded database and in-memory store belong to one process, so one process serves`,
    };
  }
  return workers <= 1 ? { mode: 'single' } : { mode: 'cluster', workers };
}

export type ClusterOptions = {
  service: string;
  /** Loads and runs the server (in a worker, or as the single process); `await import('./server')`. */
  run: () => Promise<void>;
  env?: Record<string, string | undefined>;
};

/** A worker that dies sooner than this after its fork counts as crashing at start. */
const QUICK_DEATH_MS = 5000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 8000;

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;
const THRESHOLDS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/** The primary's log: the same JSON line shape as the workers' pino (no pino in the primary). */
function primaryLogger(service: string, level: string | undefined) {
  const threshold = THRESHOLDS[level ?? 'info'] ?? (level === 'silent' ? Infinity : 30);
  return (lvl: keyof typeof LEVELS, fields: Record<string, unknown>, msg: string) => {
    if (LEVELS[lvl] < threshold) return;
    const line = {
      level: lvl,
      time: new Date().toISOString(),
      service,
      pid: process.pid,
      role: 'primary',
      ...fields,
      msg,
    };
    // One short synchronous write: never longer than PIPE_BUF, so never split among the workers' lines.
    process.stdout.write(`${JSON.stringify(line)}\n`);
  };
}

/**
 * Runs a service: in a cluster worker, or when one process is planned, starts
 * `run` through startService (one-line start failure, exit 1); otherwise
 * becomes the primary. An invalid WORKERS is a start failure like other env errors.
 */
export function runCluster(opts: ClusterOptions): void {
  if (cluster.isWorker) {
    startService(opts.service, opts.run);
    return;
  }
  const env = opts.env ?? process.env;
  const log = primaryLogger(opts.service, env.LOG_LEVEL);
  let plan: ProcessPlan;
  try {
    plan = planProcesses(env);
  } catch (err) {
    startService(opts.service, () => Promise.reject(err));
    return;
  }
  if (plan.mode === 'single') {
    if (plan.warning) log('warn', {}, plan.warning);
    startService(opts.service, opts.run);
    return;
  }
  runPrimary(opts.service, plan.workers, log);
}

type Log = ReturnType<typeof primaryLogger>;

type WorkerState = { forkedAt: number; listening: boolean; startFailure?: string };

function runPrimary(service: string, count: number, log: Log): void {
  serveClusterMetrics();
  const states = new Map<Worker, WorkerState>();
  let everListened = false;
  let initialFailures = 0;
  let quickDeaths = 0;
  let pendingForks = 0;
  let stopping: { signal: string; deadline: NodeJS.Timeout; killed: boolean; failed: boolean } | undefined;

  const fork = (): void => {
    // The resolved count: each worker sizes its Postgres pool by it (workers.ts databasePoolSize).
    const worker = cluster.fork({ WORKERS: String(count) });
    states.set(worker, { forkedAt: Date.now(), listening: false });
  };

  const finish = (code: number): void => {
    process.exit(code);
  };

  cluster.on('listening', (worker) => {
    const state = states.get(worker);
    if (!state || state.listening) return;
    state.listening = true;
    everListened = true;
    // Workers that failed before any listened were not replaced; the service works, so they are now.
    while (states.size + pendingForks < count && !stopping) fork();
  });

  cluster.on('message', (worker, message: StartFailedMessage) => {
    if (message?.type !== START_FAILED) return;
    const state = states.get(worker);
    if (state) state.startFailure = message.line;
  });

  cluster.on('exit', (worker, code, signal) => {
    const state = states.get(worker);
    states.delete(worker);
    if (stopping) {
      if (code !== 0 && !(signal && !state?.listening)) stopping.failed = true;
      if (states.size === 0) {
        clearTimeout(stopping.deadline);
        log('info', { signal: stopping.signal }, 'all workers stopped');
        finish(stopping.killed || stopping.failed ? 1 : 0);
      }
      return;
    }
    const lived = Date.now() - (state?.forkedAt ?? 0);
    if (!everListened) {
      // The first workers all failing at start is a failed start of the service, not a crash to retry.
      initialFailures++;
      if (initialFailures >= count) {
        process.stderr.write(
          `${state?.startFailure ?? `${service}: failed to start: worker exited with ${signal ?? `code ${code}`}`}\n`,
        );
        for (const w of states.keys()) w.process.kill('SIGKILL');
        finish(1);
      }
      return;
    }
    quickDeaths = lived < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    const delayMs =
      quickDeaths === 0 ? 0 : Math.min(BACKOFF_BASE_MS * 2 ** (quickDeaths - 1), BACKOFF_MAX_MS);
    log(
      'error',
      {
        worker_pid: worker.process.pid,
        code,
        signal,
        ...(state?.startFailure ? { reason: state.startFailure } : {}),
        restart_in_ms: delayMs,
      },
      'worker exited; starting a replacement',
    );
    pendingForks++;
    setTimeout(() => {
      pendingForks--;
      if (!stopping) fork();
    }, delayMs);
  });

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    const deadline = setTimeout(() => {
      if (!stopping) return;
      stopping.killed = true;
      log(
        'error',
        { workers: [...states.keys()].map((w) => w.process.pid) },
        'workers did not stop in time; killing them',
      );
      for (const w of states.keys()) w.process.kill('SIGKILL');
    }, STOP_DEADLINE_MS);
    stopping = { signal, deadline, killed: false, failed: false };
    log('info', { signal, workers: states.size }, 'stopping workers');
    if (states.size === 0) finish(0);
    for (const [worker, state] of states) {
      // A listening worker drains (runServer's shutdown). One still starting has nothing to drain: the
      // signal ends it. The message rather than a signal, because Ctrl-C in a terminal signals the
      // whole process group too, and a second SIGINT would end a draining worker.
      if (state.listening && worker.isConnected()) worker.send({ type: SHUTDOWN_MESSAGE, signal });
      else worker.process.kill(signal);
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  log('info', { workers: count }, 'starting workers');
  for (let i = 0; i < count; i++) fork();
}
