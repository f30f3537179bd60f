import os from 'node:os';
import { parseArgs } from 'node:util';
import { runMain } from './cli';
import { type DbProbe, executeScenario, type RunSettings, type ScenarioResult } from './execute';
import type { LoadGeneratorMode } from './load/run-load';
import { calibrateDbProbe, readDbCounters } from './probe/pg-stats';
import { describeMachine, readGitInfo } from './report/machine';
import { RESULTS_DIR, type RunRecord, recordRun, renderMarkdown } from './report/results';
import { SCENARIOS, type Scenario, type ServiceName, type Targets } from './scenarios';
import { startGatewayTarget } from './targets/gateway';
import { startPaymentTarget } from './targets/payment';

const USAGE = `Usage: tsx --conditions=source src/run.ts [options] [scenario...]
  no names: every scenario except the references; "all": every scenario
  --duration <s>     measured seconds per scenario (default 10)
  --warmup <s>       warm-up seconds, not measured (default 2)
  --connections <n>  concurrent connections (default 10)
  --loadgen child|inproc  where autocannon runs (default child)
  --no-record        print the table only; write nothing to bench/results
Scenarios: ${SCENARIOS.map((s) => s.name + (s.reference ? ' (reference)' : '')).join(', ')}`;

function parseCli(): { settings: RunSettings; scenarios: Scenario[]; record: boolean } {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      loadgen: { type: 'string', default: 'child' },
      'no-record': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number`);
    return n;
  };
  if (values.loadgen !== 'child' && values.loadgen !== 'inproc')
    throw new Error('--loadgen must be child or inproc');
  const unknown = positionals.filter((name) => name !== 'all' && !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}\n${USAGE}`);
  const scenarios =
    positionals.length === 0
      ? SCENARIOS.filter((s) => !s.reference)
      : positionals.includes('all')
        ? SCENARIOS
        : SCENARIOS.filter((s) => positionals.includes(s.name));
  return {
    settings: {
      connections: number('connections', values.connections),
      warmupSec: number('warmup', values.warmup),
      durationSec: number('duration', values.duration),
      loadgen: values.loadgen as LoadGeneratorMode,
    },
    scenarios,
    record: !values['no-record'],
  };
}

async function startTargets(services: Set<ServiceName>): Promise<Targets> {
  return {
    ...(services.has('gateway') ? { gateway: await startGatewayTarget() } : {}),
    ...(services.has('payment') ? { payment: await startPaymentTarget() } : {}),
  };
}

async function main(): Promise<number> {
  const { settings, scenarios, record } = parseCli();
  const loadAtStart = Math.round((os.loadavg()[0] ?? 0) * 100) / 100;
  const startedAt = new Date().toISOString();
  const targets = await startTargets(new Set(scenarios.map((s) => s.service)));
  const results: ScenarioResult[] = [];
  let postgresVersion: string | null = null;
  try {
    const probes = new Map<ServiceName, DbProbe>();
    for (const service of ['gateway', 'payment'] as const) {
      const target = targets[service];
      if (!target) continue;
      const database = target.database;
      if (database.kind === 'postgres') {
        const [row] = await database.db.query<{ server_version: string }>('SHOW server_version');
        postgresVersion = row?.server_version ?? 'unknown';
      }
      const overhead = await calibrateDbProbe(database);
      probes.set(service, { overhead, last: null, read: () => readDbCounters(database) });
    }
    for (const scenario of scenarios) {
      const target = targets[scenario.service];
      const db = probes.get(scenario.service);
      if (!target || !db) throw new Error(`${scenario.service} is not running`);
      process.stdout.write(`${scenario.name} ... `);
      const result = await executeScenario(scenario, {
        targets,
        settings,
        db,
        logs: () => target.logs.counts(),
      });
      results.push(result);
      const l = result.latencyMs;
      console.log(
        `${result.requestsPerSec} req/s, p50 ${l.p50} p99 ${l.p99} max ${l.max} ms, ${result.cpuMsPerRequest} CPU ms/req${result.problems.length ? `  PROBLEMS: ${result.problems.join('; ')}` : ''}`,
      );
    }
  } finally {
    const samples = [...(targets.gateway?.logs.samples ?? []), ...(targets.payment?.logs.samples ?? [])];
    await targets.gateway?.close();
    await targets.payment?.close();
    if (results.some((r) => r.problems.length > 0) && samples.length > 0) {
      console.error(`first warnings/errors logged by the services:\n${samples.join('')}`);
    }
  }

  const runRecord: RunRecord = {
    startedAt,
    git: readGitInfo(),
    machine: describeMachine({
      loadAtStart,
      postgresVersion,
      redisReal: [targets.gateway?.kvKind, targets.payment?.kvKind].includes('redis'),
    }),
    settings,
    scenarios: results,
  };
  const failed = results.filter((r) => r.problems.length > 0);
  if (failed.length > 0) {
    console.error(`\nNOT RECORDED: ${failed.length} scenario(s) had unexpected results:`);
    for (const r of failed) console.error(`  ${r.name}: ${r.problems.join('; ')}`);
    return 1;
  }
  if (!record) {
    console.log(`\n${renderMarkdown(runRecord, null)}`);
    return 0;
  }
  const { file, markdown } = recordRun(runRecord);
  console.log(`\n${markdown}\nrecorded: ${file} and appended to ${RESULTS_DIR}/README.md`);
  return 0;
}

runMain(main);
