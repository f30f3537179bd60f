import { setTimeout as sleep } from 'node:timers/promises';
import { type LoadGeneratorMode, runLoad } from './load/run-load';
import type { LoadResult, LoadSpec } from './load/types';
import { type DbCounters, diffCounters } from './probe/pg-stats';
import { type ProcessSample, startProcessProbe } from './probe/process-probe';
import type { Scenario, Targets } from './scenarios';
import type { LogCounts } from './targets/log-sink';

/** Load settings shared by every scenario of a run. */
export type RunSettings = {
  connections: number;
  warmupSec: number;
  durationSec: number;
  loadgen: LoadGeneratorMode;
};

/** Per-request database work, from pg_stat_database around the run (warm-up included); null off Postgres. */
export type DbPerRequest = {
  transactions: number;
  rowsInserted: number;
  rowsUpdated: number;
  rowsDeleted: number;
};

export type ScenarioResult = LoadResult & {
  name: string;
  service: string;
  summary: string;
  expectStatus: number;
  /** Service-process CPU per measured response, in ms; the number that survives machine noise best. */
  cpuMsPerRequest: number;
  process: ProcessSample;
  db: DbPerRequest | null;
  sideEffect: { name: string; calls: number; responses: number } | null;
  logs: LogCounts;
  /** Why the result is not valid; a run with any problem is not recorded. */
  problems: string[];
};

/** Per-database probe state: the calibration and the last reading, reused as the next "before". */
export type DbProbe = {
  overhead: DbCounters | null;
  last: DbCounters | null;
  read(): Promise<DbCounters | null>;
};

type Context = { targets: Targets; settings: RunSettings; db: DbProbe; logs: () => LogCounts };

/**
 * Requests cut off when autocannon stops keep running in the service (and
 * reach upstream) for a while; wait until the side-effect counter has been
 * still for 300 ms, so they count for this scenario and never run into the next.
 */
async function settle(scenario: Scenario, targets: Targets): Promise<void> {
  let last = scenario.sideEffect?.count(targets) ?? 0;
  const deadline = Date.now() + 10_000;
  for (;;) {
    await sleep(300);
    const now = scenario.sideEffect?.count(targets) ?? 0;
    if (now === last || Date.now() > deadline) return;
    last = now;
  }
}

function subtractLogs(after: LogCounts, before: LogCounts): LogCounts {
  return {
    lines: after.lines - before.lines,
    warn: after.warn - before.warn,
    error: after.error - before.error,
  };
}

function perRequest(diff: DbCounters, responses: number): DbPerRequest {
  const r = (n: number) => Math.round((n / responses) * 1000) / 1000;
  return {
    transactions: r(diff.xactCommit + diff.xactRollback),
    rowsInserted: r(diff.tupInserted),
    rowsUpdated: r(diff.tupUpdated),
    rowsDeleted: r(diff.tupDeleted),
  };
}

async function preflight(scenario: Scenario, spec: LoadSpec, targets: Targets): Promise<void> {
  const init: RequestInit = { method: spec.method, headers: spec.headers };
  if (spec.body !== undefined) init.body = spec.body;
  const res = await fetch(spec.url, init);
  const body = await res.text();
  if (res.status !== scenario.expectStatus) {
    throw new Error(
      `${scenario.name}: preflight got ${res.status}, expected ${scenario.expectStatus}: ${body.slice(0, 300)}`,
    );
  }
  const wrong = scenario.check(body, res.headers, targets);
  if (wrong) throw new Error(`${scenario.name}: preflight response is wrong: ${wrong}`);
}

function findProblems(scenario: Scenario, result: ScenarioResult, connections: number): string[] {
  const problems: string[] = [];
  const expected = String(scenario.expectStatus);
  if (result.requests === 0) problems.push('no responses');
  for (const [phase, statuses] of [
    ['measured', result.statuses],
    ['warm-up', result.warmup.statuses],
  ] as const) {
    const other = Object.entries(statuses).filter(([status]) => status !== expected);
    if (other.length > 0)
      problems.push(`${phase}: unexpected statuses ${JSON.stringify(Object.fromEntries(other))}`);
  }
  if (result.errors + result.warmup.errors > 0) {
    problems.push(`${result.errors + result.warmup.errors} connection errors (${result.timeouts} timeouts)`);
  }
  if (result.logs.error > 0) problems.push(`${result.logs.error} error log lines during the run`);
  const effect = result.sideEffect;
  if (effect && scenario.sideEffect) {
    // Requests cut off when autocannon stops (warm-up and measured run) reach upstream without a response.
    const slack = scenario.sideEffect.perResponse === 0 ? 0 : 2 * connections;
    const low = effect.responses * scenario.sideEffect.perResponse;
    if (effect.calls < low || effect.calls > low + slack) {
      problems.push(
        `${effect.name}: ${effect.calls} for ${effect.responses} responses, expected ${low}${slack ? `..${low + slack}` : ''}`,
      );
    }
  }
  return problems;
}

/** Preflight, warm-up, measured run and the checks of one scenario. */
export async function executeScenario(scenario: Scenario, ctx: Context): Promise<ScenarioResult> {
  const { targets, settings } = ctx;
  const spec: LoadSpec = {
    ...scenario.request(targets),
    connections: settings.connections,
    warmupSec: settings.warmupSec,
    durationSec: settings.durationSec,
    timeoutSec: 10,
  };
  const effectBefore = scenario.sideEffect?.count(targets) ?? 0;
  await preflight(scenario, spec, targets);
  const dbBefore = ctx.db.last ?? (await ctx.db.read());
  const logsBefore = ctx.logs();
  let probe: ReturnType<typeof startProcessProbe> | undefined;
  const load = await runLoad(spec, settings.loadgen, () => {
    probe = startProcessProbe();
  });
  const sample = (probe ?? startProcessProbe()).stop();
  await settle(scenario, targets);
  const dbAfter = await ctx.db.read();
  ctx.db.last = dbAfter;
  const responses = load.warmup.requests + load.requests + 1;
  const result: ScenarioResult = {
    name: scenario.name,
    service: scenario.service,
    summary: scenario.summary,
    expectStatus: scenario.expectStatus,
    ...load,
    cpuMsPerRequest: load.requests > 0 ? Math.round((sample.cpuMs / load.requests) * 1000) / 1000 : 0,
    process: sample,
    db:
      dbBefore && dbAfter
        ? perRequest(diffCounters(dbAfter, dbBefore, ctx.db.overhead ?? undefined), responses)
        : null,
    sideEffect: scenario.sideEffect
      ? {
          name: scenario.sideEffect.name,
          calls: scenario.sideEffect.count(targets) - effectBefore,
          responses,
        }
      : null,
    logs: subtractLogs(ctx.logs(), logsBefore),
    problems: [],
  };
  result.problems = findProblems(scenario, result, settings.connections);
  return result;
}
