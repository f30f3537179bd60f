import { execFileSync, fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVER_KEYS } from '@platform/gateway/testing';
import { parsePrometheusText } from '@platform/testing';
import { runMain } from '../cli';
import { describeMachine, type MachineInfo, readGitInfo } from '../report/machine';
import { COLORS, renderBarChart } from '../report/svg';
import { parsePeerCli, peerStores } from './cli';
import { memoryMbOf, sampleRss, startOrClose } from './processes';
import { gatewaySettingsText, median, printOrRecord, round2 } from './record';
import {
  type OurGateway,
  PRODUCTION_NODE_ARGS,
  startOurGateway,
  startUpstream,
  type Upstream,
} from './services';
import type { StreamClientResult, StreamClientSpec } from './stream-client';

const USAGE = `Usage: npm run streams -w @platform/bench -- [options]
  N concurrent SSE streams through our gateway (built dist/, NODE_ENV=production,
  Postgres, Redis), fed by a slow-drip OpenAI fake in its own process, and the
  same streams straight from the fake as the floor, alternating, in one run.
  --streams <list>   concurrent streams per run, comma-separated (default 1000,2000)
  --chunks <n>       content chunks per stream (default 20)
  --interval <ms>    upstream delay between chunks (default 100)
  --rounds <n>       alternating rounds (default 2)
  --cpu-prof <dir>   run our gateway under node --cpu-prof
  --gateway-node-args "<flags>"  extra node flags for our gateway (e.g. --max-semi-space-size=4)
  --gateway-env "NAME=value ..."  added to our gateway's environment (e.g. WORKERS=1)
  --gateway-script <path>  run another build of ours instead of apps/gateway/dist/main.js
                     (e.g. ../apps/gateway/dist-before/main.js, an earlier commit's build)
  --floor            also run the floor of a Node relay (src/peers/floor-relay.js: no auth,
                     limits, parsing or logs; one process) in the same alternating rounds
  --no-record        print only
Needs TEST_DATABASE_URL and TEST_REDIS_URL (or BENCH_REDIS_URL) and a built apps/gateway/dist.
The client holds 'streams' sockets: ulimit -n must allow it (checked).`;

type Target = 'direct' | 'ours' | 'floor';

/** The bare Node relay (bench only): what any Node gateway pays for the same streams. */
const FLOOR_RELAY = path.join(__dirname, 'floor-relay.js');

export type StreamRun = StreamClientResult & {
  round: number;
  target: Target;
  /** Highest RSS sampled every 50 ms during the run, MB: ours (or the floor relay's), or for direct the upstream fake's (a bare Node server holding the same streams). */
  peakRssMb: number;
  /** Ours and the floor: event-loop delay during the run from its /metrics (prom-client, reset at each scrape), ms. */
  eventLoopDelayMs: { p50: number; p99: number; max: number } | null;
};

/** Medians over rounds of one target's streams (ms), and the fewest completed. */
type Side = {
  ttfcP50: number;
  ttfcP99: number;
  latenessP50: number;
  latenessP99: number;
  transitP50: number;
  transitP99: number;
  completed: number;
};

type Comparison = {
  streams: number;
  direct: Side & {
    /** The upstream fake's peak RSS while serving the streams directly. */
    upstreamPeakRssMb: number;
  };
  ours: Side & {
    peakRssMb: number;
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
  };
  /** With --floor: the bare Node relay, and what it added over direct (same fields as `added`). */
  floor?: Side & {
    peakRssMb: number;
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
    added: { ttfcP50: number; chunkDelayP50: number; chunkDelayP99: number };
  };
  /**
   * Ours minus direct, medians over rounds. chunkDelay: each chunk's transit
   * (upstream write -> client read); lateness: arrival against an ideal
   * schedule from the request's start, so it also holds the time to open the
   * stream (the TTFC) in every chunk.
   */
  added: {
    ttfcP50: number;
    chunkDelayP50: number;
    chunkDelayP99: number;
    latenessP50: number;
    latenessP99: number;
  };
};

export type StreamsRecord = {
  scenario: 'streams';
  startedAt: string;
  git: ReturnType<typeof readGitInfo>;
  machine: MachineInfo;
  settings: {
    streams: number[];
    chunks: number;
    intervalMs: number;
    rounds: number;
    gateway?: { nodeArgs: string[]; env: Record<string, string> };
    gatewayScript?: string;
    floor?: boolean;
  };
  runs: StreamRun[];
  comparisons: Comparison[];
  ours: { idleRssMb: number; peakRssMbProcess: number; errorLines: number };
  /** With --floor: the floor relay's RSS after the warm-up. */
  floor?: { idleRssMb: number };
  problems: string[];
};

function runClient(spec: StreamClientSpec): Promise<StreamClientResult> {
  const child = fork(path.join(__dirname, 'stream-client.ts'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once(
      'message',
      (m: { type: 'result'; result: StreamClientResult } | { type: 'failed'; message: string }) =>
        m.type === 'result' ? resolve(m.result) : reject(new Error(m.message)),
    );
    child.once('exit', (code) => reject(new Error(`stream client exited with ${code}`)));
    child.send(spec);
  });
}

/** Event-loop delay since the previous scrape, from prom-client's default metrics. */
async function scrapeLoopDelay(url: string): Promise<{ p50: number; p99: number; max: number }> {
  const families = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  const value = (name: string) =>
    round2(Number(families.find((f) => f.name === name)?.metrics[0]?.value ?? 0) * 1000);
  return {
    p50: value('nodejs_eventloop_lag_p50_seconds'),
    p99: value('nodejs_eventloop_lag_p99_seconds'),
    max: value('nodejs_eventloop_lag_max_seconds'),
  };
}

const MESSAGES = [{ role: 'user', content: 'Stream to the benchmark.' }];

function specFor(
  target: Target,
  n: number,
  s: { upstream: Upstream; ours: OurGateway; floor?: OurGateway },
  chunks: number,
  intervalMs: number,
): StreamClientSpec {
  const gateway = target === 'floor' ? s.floor : s.ours;
  if (!gateway) throw new Error('the floor relay is not running');
  const common = { streams: n, expectChunks: chunks, chunkIntervalMs: intervalMs, timeoutMs: 60_000 };
  return target === 'direct'
    ? {
        ...common,
        url: `${s.upstream.baseURL}/chat/completions`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEYS.GROQ_API_KEY}` },
        body: JSON.stringify({ model: 'free-a', messages: MESSAGES, stream: true }),
      }
    : {
        ...common,
        url: `${gateway.url}/api/v1/ai/chat/stream`,
        headers: { 'content-type': 'application/json', 'x-api-key': gateway.apiKey },
        body: JSON.stringify({ lane: 'free', project_id: 'bench', messages: MESSAGES }),
      };
}

function compare(runs: StreamRun[], n: number): Comparison {
  const of = (t: Target) => runs.filter((r) => r.streams === n && r.target === t);
  const med = (t: Target, f: (r: StreamRun) => number) => round2(median(of(t).map(f)));
  const side = (t: Target): Side => ({
    ttfcP50: med(t, (r) => r.ttfcMs.p50),
    ttfcP99: med(t, (r) => r.ttfcMs.p99),
    latenessP50: med(t, (r) => r.chunkLatenessMs.p50),
    latenessP99: med(t, (r) => r.chunkLatenessMs.p99),
    transitP50: med(t, (r) => r.chunkTransitMs.p50),
    transitP99: med(t, (r) => r.chunkTransitMs.p99),
    completed: Math.min(...of(t).map((r) => r.completed)),
  });
  const direct = {
    ...side('direct'),
    upstreamPeakRssMb: Math.max(...of('direct').map((r) => r.peakRssMb ?? 0)),
  };
  /** A gateway's side: its streams, peak RSS and event-loop delay. */
  const gatewaySide = (t: 'ours' | 'floor') => ({
    ...side(t),
    peakRssMb: Math.max(...of(t).map((r) => r.peakRssMb ?? 0)),
    loopDelayP99Ms: med(t, (r) => r.eventLoopDelayMs?.p99 ?? 0),
    loopDelayMaxMs: Math.max(...of(t).map((r) => r.eventLoopDelayMs?.max ?? 0)),
  });
  /** What a gateway added over direct: TTFC and each chunk's transit. */
  const addedOver = (g: Side) => ({
    ttfcP50: round2(g.ttfcP50 - direct.ttfcP50),
    chunkDelayP50: round2(g.transitP50 - direct.transitP50),
    chunkDelayP99: round2(g.transitP99 - direct.transitP99),
  });
  const ours = gatewaySide('ours');
  const floor = of('floor').length > 0 ? gatewaySide('floor') : undefined;
  return {
    streams: n,
    direct,
    ours,
    ...(floor ? { floor: { ...floor, added: addedOver(floor) } } : {}),
    added: {
      ...addedOver(ours),
      latenessP50: round2(ours.latenessP50 - direct.latenessP50),
      latenessP99: round2(ours.latenessP99 - direct.latenessP99),
    },
  };
}

function markdownOf(r: StreamsRecord, files: { json: string; svg: string } | null): string {
  const m = r.machine;
  const lines = [
    `## Stream capacity: ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${r.git.sha}${r.git.dirtyFiles.length ? ` + ${r.git.dirtyFiles.length} uncommitted files` : ''}`,
    '',
    `Node ${m.node}, ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}; Postgres ${m.postgres.version}, Redis real; load average ${m.loadAverage.start} -> ${m.loadAverage.end}.`,
    `N streams opened at once by an undici client in its own process; the OpenAI fake (own process) sends ${r.settings.chunks} content chunks ${r.settings.intervalMs} ms apart; ours = \`node ${PRODUCTION_NODE_ARGS.join(' ')} ${r.settings.gatewayScript ? path.relative(process.cwd(), r.settings.gatewayScript) : 'apps/gateway/dist/main.js'}\` (the Dockerfile's flags), \`NODE_ENV=production\`, ${gatewaySettingsText(r.settings.gateway)}, Postgres, Redis, API key, limits and usage on. ${r.settings.rounds} alternating rounds, medians. TTFC = request start to first content chunk; chunk transit = arrival − the moment the upstream wrote the chunk (its monotonic-clock stamp), so "added per-chunk delay" is what each chunk gained through the gateway; chunk lateness = arrival − start − k × ${r.settings.intervalMs} ms for chunk k (it also carries the time to open the stream); "added" = ours − direct. Loop delay from ours' /metrics (prom-client), RSS sampled every 50 ms.${files ? ` Files: [${files.json}](${files.json}), chart [${files.svg}](${files.svg}).` : ''}`,
    '',
    files ? `![stream capacity chart](${files.svg})\n` : '',
    '| streams | completed direct / ours | TTFC p50 direct / ours | added TTFC p50 | chunk transit p99 direct / ours | added per-chunk delay p50 / p99 | added lateness p50 / p99 | ours peak RSS MB (the fake, direct) | ours loop delay p99 / max ms |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...r.comparisons.map(
      (c) =>
        `| ${c.streams} | ${c.direct.completed} / ${c.ours.completed} | ${c.direct.ttfcP50} / ${c.ours.ttfcP50} | **${c.added.ttfcP50}** | ${c.direct.transitP99} / ${c.ours.transitP99} | ${c.added.chunkDelayP50} / **${c.added.chunkDelayP99}** | ${c.added.latenessP50} / ${c.added.latenessP99} | **${c.ours.peakRssMb}** (${c.direct.upstreamPeakRssMb}) | ${c.ours.loopDelayP99Ms} / ${c.ours.loopDelayMaxMs} |`,
    ),
    '',
    ...floorMarkdown(r),
    `Targets at 2,000 streams: added per-chunk delay p99 ≤ 50 ms, added TTFC p50 ≤ 200 ms, peak RSS ≤ 250 MB. Ours idle RSS ${r.ours.idleRssMb} MB, process peak (VmHWM) ${r.ours.peakRssMbProcess} MB, ${r.ours.errorLines} error log lines.`,
    r.problems.length ? `Problems: ${r.problems.join('; ')}.` : '',
    '',
  ];
  return lines.filter((l, i) => l !== '' || lines[i - 1] !== '').join('\n');
}

/** With --floor: the bare Node relay's row beside ours (added = floor − direct, same run). */
function floorMarkdown(r: StreamsRecord): string[] {
  const rows = r.comparisons.filter((c) => c.floor);
  if (rows.length === 0) return [];
  return [
    `The floor of a Node relay (\`bench/src/peers/floor-relay.js\`: one process, no key check, limits, parsing, re-framing, usage or logs; idle RSS ${r.floor?.idleRssMb ?? '–'} MB), in the same alternating rounds:`,
    '',
    '| streams | completed floor | added TTFC p50 floor / ours | added per-chunk delay p99 floor / ours | peak RSS MB floor / ours | loop delay p99 / max ms, floor |',
    '|--:|--:|--:|--:|--:|--:|',
    ...rows.map((c) => {
      const f = c.floor as NonNullable<Comparison['floor']>;
      return `| ${c.streams} | ${f.completed} | ${f.added.ttfcP50} / ${c.added.ttfcP50} | ${f.added.chunkDelayP99} / ${c.added.chunkDelayP99} | ${f.peakRssMb} / ${c.ours.peakRssMb} | ${f.loopDelayP99Ms} / ${f.loopDelayMaxMs} |`;
    }),
    '',
  ];
}

function chartOf(r: StreamsRecord): string {
  return renderBarChart(
    `Concurrent SSE streams through the gateway, ${r.startedAt.slice(0, 10)} (${r.git.sha})`,
    [
      `${r.settings.chunks} chunks ${r.settings.intervalMs} ms apart per stream; direct = the same streams straight from the upstream fake; ours: ${gatewaySettingsText(r.settings.gateway).replaceAll('**', '')}.`,
      `${r.machine.cores} cores ${r.machine.cpuModel}, Node ${r.machine.node}, load avg ${r.machine.loadAverage.start}; medians of ${r.settings.rounds} rounds.`,
    ],
    r.comparisons.flatMap((c) => [
      {
        title: `${c.streams} streams: time to first chunk p50, and each chunk's transit p99 (ms, lower is better)`,
        unit: 'ms',
        bars: [
          { label: 'TTFC p50 direct', value: c.direct.ttfcP50, color: COLORS.direct },
          { label: 'TTFC p50 ours', value: c.ours.ttfcP50, color: COLORS.ours },
          ...(c.floor
            ? [{ label: 'TTFC p50 Node floor', value: c.floor.ttfcP50, color: COLORS.variant }]
            : []),
          { label: 'transit p99 direct', value: c.direct.transitP99, color: COLORS.direct },
          { label: 'transit p99 ours', value: c.ours.transitP99, color: COLORS.ours },
          ...(c.floor
            ? [{ label: 'transit p99 Node floor', value: c.floor.transitP99, color: COLORS.variant }]
            : []),
        ],
      },
      {
        title: `${c.streams} streams: peak RSS, ours and the bare upstream fake holding the same streams (MB)`,
        unit: 'MB',
        bars: [
          { label: 'fake, direct', value: c.direct.upstreamPeakRssMb, color: COLORS.direct },
          { label: 'ours peak RSS', value: c.ours.peakRssMb, color: COLORS.ours },
          ...(c.floor
            ? [{ label: 'Node floor peak RSS', value: c.floor.peakRssMb, color: COLORS.variant }]
            : []),
        ],
      },
    ]),
  );
}

async function main(): Promise<number> {
  const {
    values,
    cpuProfArgs,
    gatewayNodeArgs,
    gatewayEnv,
    record: shouldRecord,
  } = parsePeerCli(
    {
      streams: { type: 'string', default: '1000,2000' },
      chunks: { type: 'string', default: '20' },
      interval: { type: 'string', default: '100' },
      rounds: { type: 'string', default: '2' },
      'gateway-script': { type: 'string' },
      floor: { type: 'boolean', default: false },
    },
    USAGE,
  );
  const settings = {
    streams: values.streams.split(',').map(Number),
    chunks: Number(values.chunks),
    intervalMs: Number(values.interval),
    rounds: Number(values.rounds),
    /** What was added to ours' production command line and environment (none in a recorded default run). */
    gateway: { nodeArgs: gatewayNodeArgs, env: gatewayEnv },
    /** Another build of ours than apps/gateway/dist/main.js (none in a recorded default run). */
    gatewayScript: values['gateway-script'] ? path.resolve(values['gateway-script']) : undefined,
    /** Also the floor relay, in the same alternating rounds. */
    floor: values.floor,
  };
  const { databaseServerUrl, redisUrl } = peerStores(USAGE);
  // Each process holds one socket per stream (the gateway two), plus its own files.
  const fdLimit = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  const needed = 2 * Math.max(...settings.streams) + 200;
  if (fdLimit !== 'unlimited' && Number(fdLimit) < needed)
    throw new Error(
      `ulimit -n is ${fdLimit}; ${needed} file descriptors are needed (raise it: ulimit -n ${needed})`,
    );
  const loadAtStart = round2(os.loadavg()[0] ?? 0);
  const startedAt = new Date().toISOString();
  const chunks = Array.from({ length: settings.chunks }, (_, i) => `c${String(i).padStart(2, '0')} `);
  const upstream = await startUpstream({ chunks, chunkDelayMs: settings.intervalMs, stampChunks: true });
  const ours = await startOrClose(
    startOurGateway(upstream, {
      databaseServerUrl,
      redisUrl,
      nodeArgs: [...cpuProfArgs, ...gatewayNodeArgs],
      env: gatewayEnv,
      script: settings.gatewayScript,
    }),
    [upstream],
  );
  const floor = settings.floor
    ? await startOrClose(startOurGateway(upstream, { databaseServerUrl, redisUrl, script: FLOOR_RELAY }), [
        upstream,
        ours,
      ])
    : undefined;
  const services = { upstream, ours, floor };
  let floorIdleRssMb = 0;
  const runs: StreamRun[] = [];
  const problems: string[] = [];
  let idleRssMb = 0;
  let peakRssMbProcess = 0;
  let postgresVersion: string | null = null;
  try {
    // One stream first (the path works), then two waves of 200 (every worker's JIT has seen
    // the stream path; each wave's connections are spread over the workers). Not measured.
    await runClient(specFor('ours', 1, services, settings.chunks, 1));
    for (let wave = 0; wave < 2; wave += 1)
      await runClient(specFor('ours', 200, services, settings.chunks, 1));
    if (floor) await runClient(specFor('floor', 200, services, settings.chunks, 1));
    await sleep(1000);
    idleRssMb = memoryMbOf(ours.pid).rss;
    if (floor) floorIdleRssMb = memoryMbOf(floor.pid).rss;
    for (const n of settings.streams) {
      for (let round = 1; round <= settings.rounds; round += 1) {
        const targets: Target[] = floor ? ['direct', 'ours', 'floor'] : ['direct', 'ours'];
        const order = round % 2 === 1 ? targets : [...targets].reverse();
        for (const target of order) {
          await sleep(1000);
          const gateway = target === 'ours' ? ours : target === 'floor' ? floor : undefined;
          if (gateway) await scrapeLoopDelay(gateway.url);
          const rss = sampleRss(gateway ? gateway.pid : upstream.pid);
          const result = await runClient(specFor(target, n, services, settings.chunks, settings.intervalMs));
          const peakRssMb = rss.stop();
          const eventLoopDelayMs = gateway ? await scrapeLoopDelay(gateway.url) : null;
          runs.push({ ...result, round, target, peakRssMb, eventLoopDelayMs });
          if (result.failed > 0)
            problems.push(
              `${n} streams, ${target}, round ${round}: ${result.failed} failed (${result.firstErrors.join(' | ')})`,
            );
          console.log(
            `${n} streams ${target.padEnd(6)} round ${round}: completed ${result.completed}/${n}, TTFC p50 ${result.ttfcMs.p50} p99 ${result.ttfcMs.p99}, transit p50 ${result.chunkTransitMs.p50} p99 ${result.chunkTransitMs.p99}, lateness p50 ${result.chunkLatenessMs.p50} p99 ${result.chunkLatenessMs.p99} ms, peak RSS ${peakRssMb} MB${eventLoopDelayMs ? `, loop p99 ${eventLoopDelayMs.p99} max ${eventLoopDelayMs.max} ms` : ''}`,
          );
        }
      }
    }
    peakRssMbProcess = memoryMbOf(ours.pid).peak;
    const [row] = await ours.database.db.query<{ server_version: string }>('SHOW server_version');
    postgresVersion = row?.server_version ?? null;
  } finally {
    await floor?.close();
    await ours.close();
    await upstream.close();
  }
  if (ours.output.errorLines > 0)
    problems.push(
      `ours logged ${ours.output.errorLines} error lines: ${ours.output.samples.join('').slice(0, 500)}`,
    );
  const record: StreamsRecord = {
    scenario: 'streams',
    startedAt,
    git: readGitInfo(),
    machine: describeMachine({ loadAtStart, postgresVersion, redisReal: true }),
    settings,
    runs,
    comparisons: settings.streams.map((n) => compare(runs, n)),
    ours: { idleRssMb, peakRssMbProcess, errorLines: ours.output.errorLines },
    ...(floor ? { floor: { idleRssMb: floorIdleRssMb } } : {}),
    problems,
  };
  // Failed streams are a finding, not a reason to drop the run: they are in the table and the problems line.
  printOrRecord('streams', record, shouldRecord, chartOf, markdownOf);
  return !shouldRecord && problems.length ? 1 : 0;
}

runMain(main);
