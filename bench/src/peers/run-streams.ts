import { execFileSync, fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVER_KEYS } from '@platform/gateway/testing';
import { parsePrometheusText } from '@platform/testing';
import { runMain } from '../cli';
import { describeMachine, type MachineInfo, readGitInfo } from '../report/machine';
import { type Bar, COLORS, renderBarChart } from '../report/svg';
import { parseEnvPairs, parsePeerCli, peerStores } from './cli';
import { memoryMbOf, REPO_ROOT, type ServiceProcess, sampleRss, startOrClose } from './processes';
import { gatewaySettingsText, median, printOrRecord, round2 } from './record';
import {
  type OurGateway,
  PRODUCTION_GATEWAY_ENV_TEXT,
  PRODUCTION_NODE_ARGS,
  portkeyVersion,
  startOurGateway,
  startPortkey,
  startUpstream,
  type Upstream,
} from './services';
import type { StreamClientResult, StreamClientSpec } from './stream-client';

const USAGE = `Usage: npm run streams -w @platform/bench -- [options]
  N concurrent SSE streams through our gateway (built dist/, NODE_ENV=production,
  Postgres, Redis) and Portkey's open-source gateway, fed by a slow-drip OpenAI
  fake in its own process, and the same streams straight from the fake as the
  floor, alternating, in one run.
  --streams <list>   concurrent streams per run, comma-separated (default 1000,2000)
  --chunks <n>       content chunks per stream (default 20)
  --interval <ms>    upstream delay between chunks (default 100)
  --rounds <n>       alternating rounds (default 2)
  --cpu-prof <dir>   run our gateway under node --cpu-prof
  --gateway-node-args "<flags>"  extra node flags for our gateway (e.g. --max-semi-space-size=4)
  --gateway-env "NAME=value ..."  added to our gateway's environment (e.g. WORKERS=1)
  --gateway-script <path>  run another build of ours instead of apps/gateway/dist/main.js
                     (e.g. ../apps/gateway/dist-before/main.js, an earlier commit's build)
  --variant-script <path>  also run a second instance of ours from this built entry (e.g. the
                     commit before, built in its own checkout), measured in the same
                     alternating rounds (rows named after its checkout's commit)
  --variant-env "NAME=value ..."  the second instance's environment, added to --gateway-env's
                     (alone: the same build in another configuration, e.g. WORKERS=1)
  --variant-node-args "<flags>"  the second instance's node flags, after --gateway-node-args'
                     (alone: the same build with other flags, e.g. --max-semi-space-size=4)
  --no-portkey       leave Portkey out
  --floor            also run the floor of a Node relay (src/peers/floor-relay.js: no auth,
                     limits, parsing or logs; one process) in the same alternating rounds
  --no-record        print only
Needs TEST_DATABASE_URL and TEST_REDIS_URL (or BENCH_REDIS_URL) and a built apps/gateway/dist.
The client holds 'streams' sockets: ulimit -n must allow it (checked).`;

/** Every gateway measured beside the direct streams; `variant` is a second instance of ours. */
type GatewayTarget = 'ours' | 'variant' | 'portkey' | 'floor';
type Target = 'direct' | GatewayTarget;
/** The gateways other than ours, in the order of the tables and the chart. */
const OTHERS = ['variant', 'portkey', 'floor'] as const;
type Other = (typeof OTHERS)[number];

/** The bare Node relay (bench only): what any Node gateway pays for the same streams. */
const FLOOR_RELAY = path.join(__dirname, 'floor-relay.js');

export type StreamRun = StreamClientResult & {
  round: number;
  target: Target;
  /**
   * Highest RSS sampled every 50 ms during the run, MB: the target's whole
   * process tree (ours and the variant: the primary and every worker, summed),
   * or for direct the upstream fake's (a bare Node server holding the same streams).
   */
  peakRssMb: number;
  /**
   * Highest PSS of the same tree, sampled every 250 ms (smaps_rollup `Pss`):
   * shared pages (the node binary's) split among the processes mapping them,
   * i.e. what the tree costs the machine; null off Linux. Absent in records
   * before it was added.
   */
  peakPssMb?: number | null;
  /** Ours, the variant and the floor: event-loop delay during the run from /metrics (prom-client, reset at each scrape), ms; Portkey has none. */
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

/** A gateway other than ours, beside ours (same fields as ours, and what it added over direct). */
type OtherSide = Side & {
  peakRssMb: number;
  peakPssMb: number | null;
  loopDelayP99Ms?: number;
  loopDelayMaxMs?: number;
  added: { ttfcP50: number; chunkDelayP50: number; chunkDelayP99: number };
};

type Comparison = {
  streams: number;
  direct: Side & {
    /** The upstream fake's peak RSS while serving the streams directly. */
    upstreamPeakRssMb: number;
    upstreamPeakPssMb: number | null;
  };
  ours: Side & {
    peakRssMb: number;
    peakPssMb: number | null;
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
  };
  /** With --variant-script / --variant-env: the second instance of ours. */
  variant?: OtherSide;
  /** Portkey, when its preflight stream worked. */
  portkey?: OtherSide;
  /** With --floor: the bare Node relay. */
  floor?: OtherSide;
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
    /** A second instance of ours from this built entry (repository-relative). */
    variantScript?: string;
    /** The variant script's checkout's commit (short), when it is in a git checkout. */
    variantCommit?: string;
    /** Added to the variant's environment (after --gateway-env's). */
    variantEnv?: Record<string, string>;
    /** The variant's extra node flags, when --variant-node-args gave any (after --gateway-node-args'). */
    variantNodeArgs?: string[];
    portkey?: boolean;
    floor?: boolean;
  };
  runs: StreamRun[];
  comparisons: Comparison[];
  /** RSS and PSS (null off Linux; absent in older records) after the warm-up, summed VmHWM at the end, error log lines. */
  ours: { idleRssMb: number; idlePssMb?: number | null; peakRssMbProcess: number; errorLines: number };
  /** The second instance of ours: the same as ours'. */
  variant?: {
    label: string;
    idleRssMb: number;
    idlePssMb?: number | null;
    peakRssMbProcess: number;
    errorLines: number;
  };
  /** Portkey: its version, RSS and PSS after the warm-up, and why it was left out of the rounds if it was. */
  portkey?: { version: string; idleRssMb: number; idlePssMb?: number | null; failed?: string };
  /** With --floor: the floor relay's RSS and PSS after the warm-up. */
  floor?: { idleRssMb: number; idlePssMb?: number | null };
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

type Services = {
  upstream: Upstream;
  gateways: Partial<Record<GatewayTarget, ServiceProcess | OurGateway>>;
};

function specFor(
  target: Target,
  n: number,
  s: Services,
  chunks: number,
  intervalMs: number,
): StreamClientSpec {
  const common = { streams: n, expectChunks: chunks, chunkIntervalMs: intervalMs, timeoutMs: 60_000 };
  const openaiBody = JSON.stringify({ model: 'free-a', messages: MESSAGES, stream: true });
  // The key our gateway sends to groq (free-a): direct and Portkey authenticate as it does.
  const authorization = `Bearer ${SERVER_KEYS.GROQ_API_KEY}`;
  if (target === 'direct')
    return {
      ...common,
      url: `${s.upstream.baseURL}/chat/completions`,
      headers: { 'content-type': 'application/json', authorization },
      body: openaiBody,
    };
  const gateway = s.gateways[target];
  if (!gateway) throw new Error(`${target} is not running`);
  if (target === 'portkey')
    return {
      ...common,
      url: `${gateway.url}/v1/chat/completions`,
      headers: {
        'content-type': 'application/json',
        authorization,
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': s.upstream.baseURL,
      },
      body: openaiBody,
    };
  if (!('apiKey' in gateway)) throw new Error(`${target} has no API key`);
  return {
    ...common,
    url: `${gateway.url}/api/v1/ai/chat/stream`,
    headers: { 'content-type': 'application/json', 'x-api-key': gateway.apiKey },
    body: JSON.stringify({ lane: 'free', project_id: 'bench', messages: MESSAGES }),
  };
}

/**
 * One stream before the rounds, read whole: does the target stream at all?
 * null when it carried every chunk, else why not (status, body, the target's
 * first error lines).
 */
async function preflightStream(spec: StreamClientSpec, service: ServiceProcess): Promise<string | null> {
  try {
    const res = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
    const body = await res.text();
    const chunks = body
      .split('\n')
      .filter((l) => l.startsWith('data:') && /"content":"c\d\d @/.test(l)).length;
    const type = res.headers.get('content-type') ?? '';
    if (res.status === 200 && type.startsWith('text/event-stream') && chunks === spec.expectChunks)
      return null;
    const logged = service.output.samples.join(' ').replace(/\s+/g, ' ').slice(0, 300);
    return `HTTP ${res.status} ${type}, ${chunks}/${spec.expectChunks} chunks: ${body.replace(/\s+/g, ' ').slice(0, 200)}${logged ? ` (its log: ${logged})` : ''}`;
  } catch (err) {
    return (err as Error).message;
  }
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
  /** The highest PSS of a target's runs; null when a run has none (off Linux, or an older record). */
  const peakPss = (t: Target) => {
    const values = of(t).map((r) => r.peakPssMb);
    return values.some((v) => v === null || v === undefined) ? null : Math.max(...(values as number[]));
  };
  const direct = {
    ...side('direct'),
    upstreamPeakRssMb: Math.max(...of('direct').map((r) => r.peakRssMb ?? 0)),
    upstreamPeakPssMb: peakPss('direct'),
  };
  /** A gateway's side: its streams, peak RSS (whole process tree) and event-loop delay (when it has /metrics). */
  const gatewaySide = (t: GatewayTarget) => {
    const loop = of(t).some((r) => r.eventLoopDelayMs)
      ? {
          loopDelayP99Ms: med(t, (r) => r.eventLoopDelayMs?.p99 ?? 0),
          loopDelayMaxMs: Math.max(...of(t).map((r) => r.eventLoopDelayMs?.max ?? 0)),
        }
      : {};
    return {
      ...side(t),
      peakRssMb: Math.max(...of(t).map((r) => r.peakRssMb ?? 0)),
      peakPssMb: peakPss(t),
      ...loop,
    };
  };
  /** What a gateway added over direct: TTFC and each chunk's transit. */
  const addedOver = (g: Side) => ({
    ttfcP50: round2(g.ttfcP50 - direct.ttfcP50),
    chunkDelayP50: round2(g.transitP50 - direct.transitP50),
    chunkDelayP99: round2(g.transitP99 - direct.transitP99),
  });
  const ours = gatewaySide('ours');
  const others: Partial<Record<Other, OtherSide>> = {};
  for (const t of OTHERS) {
    if (of(t).length === 0) continue;
    const g = gatewaySide(t);
    others[t] = { ...g, added: addedOver(g) };
  }
  return {
    streams: n,
    direct,
    ours: { ...ours, loopDelayP99Ms: ours.loopDelayP99Ms ?? 0, loopDelayMaxMs: ours.loopDelayMaxMs ?? 0 },
    ...others,
    added: {
      ...addedOver(ours),
      latenessP50: round2(ours.latenessP50 - direct.latenessP50),
      latenessP99: round2(ours.latenessP99 - direct.latenessP99),
    },
  };
}

/** Short names of the targets, for table rows and chart labels. */
function labelOf(r: StreamsRecord, t: GatewayTarget): string {
  if (t === 'ours') return 'ours';
  if (t === 'portkey') return 'Portkey';
  if (t === 'floor') return 'Node floor';
  return r.variant?.label ?? 'variant';
}

/** The variant's name: its checkout's commit (or "other build"), then what its environment adds. */
function variantLabelOf(settings: StreamsRecord['settings']): string {
  const env = [
    ...Object.entries(settings.variantEnv ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(settings.variantNodeArgs ?? []).slice(settings.gateway?.nodeArgs.length ?? 0),
  ].join(' ');
  const build = settings.variantScript
    ? settings.variantCommit
      ? `ours @${settings.variantCommit}`
      : 'ours, other build'
    : 'ours';
  return env ? `${build} ${env}` : build;
}

/** The short commit of the git checkout holding `file`, or undefined. */
function commitOf(file: string): string | undefined {
  try {
    return execFileSync('git', ['-C', path.dirname(file), 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/** A number, or a dash when there is none (PSS off Linux or in an older record; a target without /metrics). */
const dash = (v: number | null | undefined) => (v === undefined || v === null ? '–' : String(v));

function markdownOf(r: StreamsRecord, files: { json: string; svg: string } | null): string {
  const m = r.machine;
  const lines = [
    `## Stream capacity: ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${r.git.sha}${r.git.dirtyFiles.length ? ` + ${r.git.dirtyFiles.length} uncommitted files` : ''}`,
    '',
    `Node ${m.node}, ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}; Postgres ${m.postgres.version}, Redis real; load average ${m.loadAverage.start} -> ${m.loadAverage.end}.`,
    `N streams opened at once by an undici client in its own process; the OpenAI fake (own process) sends ${r.settings.chunks} content chunks ${r.settings.intervalMs} ms apart; ours = \`${PRODUCTION_GATEWAY_ENV_TEXT ? `${PRODUCTION_GATEWAY_ENV_TEXT} ` : ''}node ${PRODUCTION_NODE_ARGS.join(' ')} ${r.settings.gatewayScript ? path.relative(process.cwd(), r.settings.gatewayScript) : 'apps/gateway/dist/main.js'}\` (the Dockerfile's flags and environment), \`NODE_ENV=production\`, ${gatewaySettingsText(r.settings.gateway)}, Postgres, Redis, API key, limits and usage on.${othersText(r)} ${r.settings.rounds} alternating rounds, medians. TTFC = request start to first content chunk; chunk transit = arrival − the moment the upstream wrote the chunk (its monotonic-clock stamp), so "added per-chunk delay" is what each chunk gained through the gateway; chunk lateness = arrival − start − k × ${r.settings.intervalMs} ms for chunk k (it also carries the time to open the stream); "added" = ours − direct. Loop delay from ours' /metrics (prom-client), RSS of each target's whole process tree (a primary and its workers, summed) sampled every 50 ms, its PSS every 250 ms (RSS counts the pages the processes share, the node binary's ~50 MB, once per process; PSS splits them among the processes, so it is what the tree costs the machine; each gateway runs from its own copy of the node binary, so it shares those pages only within its tree).${files ? ` Files: [${files.json}](${files.json}), chart [${files.svg}](${files.svg}).` : ''}`,
    '',
    files ? `![stream capacity chart](${files.svg})\n` : '',
    '| streams | completed direct / ours | TTFC p50 direct / ours | added TTFC p50 | chunk transit p99 direct / ours | added per-chunk delay p50 / p99 | added lateness p50 / p99 | ours peak RSS / PSS MB (the fake, direct) | ours loop delay p99 / max ms |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...r.comparisons.map(
      (c) =>
        `| ${c.streams} | ${c.direct.completed} / ${c.ours.completed} | ${c.direct.ttfcP50} / ${c.ours.ttfcP50} | **${c.added.ttfcP50}** | ${c.direct.transitP99} / ${c.ours.transitP99} | ${c.added.chunkDelayP50} / **${c.added.chunkDelayP99}** | ${c.added.latenessP50} / ${c.added.latenessP99} | **${c.ours.peakRssMb}** / **${dash(c.ours.peakPssMb)}** (${c.direct.upstreamPeakRssMb} / ${dash(c.direct.upstreamPeakPssMb)}) | ${c.ours.loopDelayP99Ms} / ${c.ours.loopDelayMaxMs} |`,
    ),
    '',
    ...besideMarkdown(r),
    `Targets at 2,000 streams: added per-chunk delay p99 ≤ 50 ms, added TTFC p50 ≤ 200 ms, peak RSS ≤ 250 MB. Ours idle RSS / PSS ${r.ours.idleRssMb} / ${dash(r.ours.idlePssMb)} MB, process peak (VmHWM) ${r.ours.peakRssMbProcess} MB, ${r.ours.errorLines} error log lines.${r.variant ? ` ${r.variant.label}: idle RSS / PSS ${r.variant.idleRssMb} / ${dash(r.variant.idlePssMb)} MB, VmHWM ${r.variant.peakRssMbProcess} MB, ${r.variant.errorLines} error log lines.` : ''}${r.portkey && !r.portkey.failed ? ` Portkey idle RSS / PSS ${r.portkey.idleRssMb} / ${dash(r.portkey.idlePssMb)} MB.` : ''}`,
    r.problems.length ? `Problems: ${r.problems.join('; ')}.` : '',
    '',
  ];
  return lines.filter((l, i) => l !== '' || lines[i - 1] !== '').join('\n');
}

/** How the targets other than ours were run, for the description. */
function othersText(r: StreamsRecord): string {
  const parts: string[] = [];
  if (r.variant)
    parts.push(
      `${r.variant.label} = ${r.settings.variantScript ? `\`${r.settings.variantScript}\`` : 'the same build'}${
        r.settings.variantEnv
          ? ` with ${Object.entries(r.settings.variantEnv)
              .map(([k, v]) => `\`${k}=${v}\``)
              .join(' ')}`
          : ''
      }, started the same way, its own database`,
    );
  if (r.portkey)
    parts.push(
      `Portkey ${r.portkey.version} (\`NODE_ENV=production\`, headless, one process, \`x-portkey-provider: openai\` to the same fake)`,
    );
  if (r.floor) parts.push('the Node floor = `bench/src/peers/floor-relay.js` (one process)');
  return parts.length ? ` Beside it, in the same alternating rounds: ${parts.join('; ')}.` : '';
}

/** Every gateway in one table, ours first: what each added over the same run's direct streams. */
function besideMarkdown(r: StreamsRecord): string[] {
  const present = OTHERS.filter((t) => r.comparisons.some((c) => c[t]));
  const failedPortkey = r.portkey?.failed;
  if (present.length === 0 && !failedPortkey) return [];
  return [
    `Side by side, the same rounds (added = the target − direct; peak RSS and PSS of the target's whole process tree):`,
    '',
    '| streams | target | completed | TTFC p50 | added TTFC p50 | added per-chunk delay p50 / p99 | peak RSS / PSS MB | loop delay p99 / max ms |',
    '|--:|---|--:|--:|--:|--:|--:|--:|',
    ...r.comparisons.flatMap((c) => [
      `| ${c.streams} | ours | ${c.ours.completed} | ${c.ours.ttfcP50} | ${c.added.ttfcP50} | ${c.added.chunkDelayP50} / **${c.added.chunkDelayP99}** | **${c.ours.peakRssMb}** / **${dash(c.ours.peakPssMb)}** | ${c.ours.loopDelayP99Ms} / ${c.ours.loopDelayMaxMs} |`,
      ...OTHERS.flatMap((t) => {
        const o = c[t];
        if (o)
          return [
            `| ${c.streams} | ${labelOf(r, t)} | ${o.completed} | ${o.ttfcP50} | ${o.added.ttfcP50} | ${o.added.chunkDelayP50} / **${o.added.chunkDelayP99}** | **${o.peakRssMb}** / **${dash(o.peakPssMb)}** | ${dash(o.loopDelayP99Ms)} / ${dash(o.loopDelayMaxMs)} |`,
          ];
        if (t === 'portkey' && failedPortkey)
          return [`| ${c.streams} | Portkey | failed | – | – | – | – | – |`];
        return [];
      }),
    ]),
    '',
    ...(failedPortkey
      ? [`Portkey was left out of the rounds: its preflight stream failed (${failedPortkey}).`, '']
      : []),
  ];
}

const COLOR_OF: Record<GatewayTarget, string> = {
  ours: COLORS.ours,
  variant: COLORS.oursBefore,
  portkey: COLORS.portkey,
  floor: COLORS.variant,
};

function chartOf(r: StreamsRecord): string {
  const failed = r.portkey?.failed;
  type Measured = {
    side: Side & { peakRssMb: number; peakPssMb: number | null };
    added: OtherSide['added'];
  };
  /** One bar per gateway that ran (ours first), plus Portkey's failure when it did not. */
  const perGateway = (c: Comparison, what: string, value: (m: Measured) => number) => {
    const name = (t: GatewayTarget) => (what ? `${labelOf(r, t)} ${what}` : labelOf(r, t));
    const bars: Bar[] = [
      { label: name('ours'), value: value({ side: c.ours, added: c.added }), color: COLOR_OF.ours },
    ];
    for (const t of OTHERS) {
      const o = c[t];
      if (o) bars.push({ label: name(t), value: value({ side: o, added: o.added }), color: COLOR_OF[t] });
      else if (t === 'portkey' && failed)
        bars.push({
          label: name(t),
          value: 0,
          color: COLOR_OF.portkey,
          note: `(fails: ${failed.slice(0, 40)})`,
        });
    }
    return bars;
  };
  return renderBarChart(
    `Concurrent SSE streams through the gateway, ${r.startedAt.slice(0, 10)} (${r.git.sha})`,
    [
      `${r.settings.chunks} chunks ${r.settings.intervalMs} ms apart per stream; direct = the same streams straight from the upstream fake; ours: ${gatewaySettingsText(r.settings.gateway).replaceAll('**', '')}.`,
      `${r.machine.cores} cores ${r.machine.cpuModel}, Node ${r.machine.node}, load avg ${r.machine.loadAverage.start}; medians of ${r.settings.rounds} alternating rounds.`,
    ],
    r.comparisons.flatMap((c) => [
      {
        title: `${c.streams} streams: time to first chunk p50 (ms, lower is better)`,
        unit: 'ms',
        bars: [
          { label: 'direct', value: c.direct.ttfcP50, color: COLORS.direct },
          ...perGateway(c, '', (m) => m.side.ttfcP50),
        ],
      },
      {
        title: `${c.streams} streams: delay each chunk gained over direct, p50 and p99 (ms, lower is better)`,
        unit: 'ms',
        bars: [
          ...perGateway(c, 'p50', (m) => m.added.chunkDelayP50),
          ...perGateway(c, 'p99', (m) => m.added.chunkDelayP99),
        ],
      },
      {
        title: `${c.streams} streams: peak RSS of each whole process tree, and of the bare upstream fake holding the same streams (MB)`,
        unit: 'MB',
        bars: [
          { label: 'fake, direct', value: c.direct.upstreamPeakRssMb, color: COLORS.direct },
          ...perGateway(c, '', (m) => m.side.peakRssMb),
        ],
      },
      // PSS: what each tree costs the machine (shared pages split among its processes); none in older records.
      ...(c.ours.peakPssMb === null || c.ours.peakPssMb === undefined
        ? []
        : [
            {
              title: `${c.streams} streams: peak PSS of each whole process tree (shared pages split among its processes), and of the bare upstream fake (MB)`,
              unit: 'MB',
              bars: [
                { label: 'fake, direct', value: c.direct.upstreamPeakPssMb ?? 0, color: COLORS.direct },
                ...perGateway(c, '', (m) => m.side.peakPssMb ?? 0),
              ],
            },
          ]),
    ]),
  );
}

async function main(): Promise<number> {
  const {
    values,
    cpuProfArgs,
    gatewayNodeArgs,
    variantNodeArgs,
    gatewayEnv,
    record: shouldRecord,
  } = parsePeerCli(
    {
      streams: { type: 'string', default: '1000,2000' },
      chunks: { type: 'string', default: '20' },
      interval: { type: 'string', default: '100' },
      rounds: { type: 'string', default: '2' },
      'gateway-script': { type: 'string' },
      'variant-script': { type: 'string' },
      'variant-env': { type: 'string', default: '' },
      'no-portkey': { type: 'boolean', default: false },
      floor: { type: 'boolean', default: false },
    },
    USAGE,
  );
  const variantScript = values['variant-script'] ? path.resolve(values['variant-script']) : undefined;
  const variantEnv = values['variant-env'] ? parseEnvPairs(values['variant-env']) : undefined;
  const variantCommit = variantScript ? commitOf(variantScript) : undefined;
  const settings: StreamsRecord['settings'] = {
    streams: values.streams.split(',').map(Number),
    chunks: Number(values.chunks),
    intervalMs: Number(values.interval),
    rounds: Number(values.rounds),
    /** What was added to ours' production command line and environment (none in a recorded default run). */
    gateway: { nodeArgs: gatewayNodeArgs, env: gatewayEnv },
    /** Another build of ours than apps/gateway/dist/main.js (none in a recorded default run). */
    gatewayScript: values['gateway-script'] ? path.resolve(values['gateway-script']) : undefined,
    ...(variantScript ? { variantScript: path.relative(REPO_ROOT, variantScript) } : {}),
    ...(variantCommit ? { variantCommit } : {}),
    ...(variantEnv ? { variantEnv } : {}),
    ...(variantNodeArgs.length > gatewayNodeArgs.length ? { variantNodeArgs } : {}),
    portkey: !values['no-portkey'],
    /** Also the floor relay, in the same alternating rounds. */
    floor: values.floor,
  };
  const hasVariant =
    variantScript !== undefined ||
    variantEnv !== undefined ||
    variantNodeArgs.length > gatewayNodeArgs.length;
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
  const started: Array<{ close(): Promise<void> }> = [upstream];
  const start = async <T extends { close(): Promise<void> }>(starting: Promise<T>): Promise<T> => {
    const service = await startOrClose(starting, started);
    started.push(service);
    return service;
  };
  const ours = await start(
    startOurGateway(upstream, {
      databaseServerUrl,
      redisUrl,
      nodeArgs: [...cpuProfArgs, ...gatewayNodeArgs],
      env: gatewayEnv,
      script: settings.gatewayScript,
    }),
  );
  // The variant as peers starts it: ours' flags (not --cpu-prof) and environment, plus its own.
  const variant = hasVariant
    ? await start(
        startOurGateway(upstream, {
          databaseServerUrl,
          redisUrl,
          nodeArgs: variantNodeArgs,
          env: { ...gatewayEnv, ...variantEnv },
          ...(variantScript ? { script: variantScript } : {}),
        }),
      )
    : undefined;
  const portkey = settings.portkey ? await start(startPortkey()) : undefined;
  const floor = settings.floor
    ? await start(startOurGateway(upstream, { databaseServerUrl, redisUrl, script: FLOOR_RELAY }))
    : undefined;
  const services: Services = { upstream, gateways: { ours, variant, portkey, floor } };
  const runs: StreamRun[] = [];
  const problems: string[] = [];
  const idleMemoryMb: Partial<Record<GatewayTarget, { rss: number; pss: number | null }>> = {};
  let portkeyFailed: string | undefined;
  const peakRssMbProcess = { ours: 0, variant: 0 };
  let postgresVersion: string | null = null;
  try {
    // Portkey first: one whole stream; if it cannot stream against the fake, its row says why.
    if (portkey) {
      portkeyFailed =
        (await preflightStream(specFor('portkey', 1, services, settings.chunks, 1), portkey)) ?? undefined;
      if (portkeyFailed) console.log(`Portkey left out of the rounds: ${portkeyFailed}`);
    }
    const gateways: GatewayTarget[] = [
      'ours',
      ...(variant ? (['variant'] as const) : []),
      ...(portkey && !portkeyFailed ? (['portkey'] as const) : []),
      ...(floor ? (['floor'] as const) : []),
    ];
    // One stream first (the path works), then two waves of 200 (every worker's JIT has seen
    // the stream path; each wave's connections are spread over the workers). Not measured.
    for (const target of gateways) {
      const ourBuild = target === 'ours' || target === 'variant';
      if (ourBuild) await runClient(specFor(target, 1, services, settings.chunks, 1));
      for (let wave = 0; wave < (ourBuild ? 2 : 1); wave += 1)
        await runClient(specFor(target, 200, services, settings.chunks, 1));
    }
    await sleep(1000);
    for (const target of gateways) {
      const pid = services.gateways[target]?.pid;
      if (pid) idleMemoryMb[target] = memoryMbOf(pid);
    }
    /** /metrics of the gateways that have it (ours, the variant, the floor); null for Portkey or on failure. */
    const loopDelay = (target: Target) => {
      const gateway = target === 'direct' || target === 'portkey' ? undefined : services.gateways[target];
      return gateway ? scrapeLoopDelay(gateway.url).catch(() => null) : Promise.resolve(null);
    };
    for (const n of settings.streams) {
      for (let round = 1; round <= settings.rounds; round += 1) {
        const targets: Target[] = ['direct', ...gateways];
        const order = round % 2 === 1 ? targets : [...targets].reverse();
        for (const target of order) {
          await sleep(1000);
          await loopDelay(target);
          const pid = target === 'direct' ? upstream.pid : (services.gateways[target]?.pid ?? 0);
          // The whole tree: with WORKERS=auto ours is a primary and its workers (sampleRss sums them).
          const memory = sampleRss(pid);
          const result = await runClient(specFor(target, n, services, settings.chunks, settings.intervalMs));
          const { rss: peakRssMb, pss: peakPssMb } = memory.stop();
          const eventLoopDelayMs = await loopDelay(target);
          runs.push({ ...result, round, target, peakRssMb, peakPssMb, eventLoopDelayMs });
          if (result.failed > 0)
            problems.push(
              `${n} streams, ${target}, round ${round}: ${result.failed} failed (${result.firstErrors.join(' | ')})`,
            );
          console.log(
            `${n} streams ${target.padEnd(7)} round ${round}: completed ${result.completed}/${n}, TTFC p50 ${result.ttfcMs.p50} p99 ${result.ttfcMs.p99}, transit p50 ${result.chunkTransitMs.p50} p99 ${result.chunkTransitMs.p99}, lateness p50 ${result.chunkLatenessMs.p50} p99 ${result.chunkLatenessMs.p99} ms, peak RSS ${peakRssMb} PSS ${dash(peakPssMb)} MB${eventLoopDelayMs ? `, loop p99 ${eventLoopDelayMs.p99} max ${eventLoopDelayMs.max} ms` : ''}`,
          );
        }
      }
    }
    peakRssMbProcess.ours = memoryMbOf(ours.pid).peak;
    if (variant) peakRssMbProcess.variant = memoryMbOf(variant.pid).peak;
    const [row] = await ours.database.db.query<{ server_version: string }>('SHOW server_version');
    postgresVersion = row?.server_version ?? null;
  } finally {
    for (const service of [...started].reverse()) await service.close().catch(() => undefined);
  }
  for (const [name, g] of [
    ['ours', ours],
    ['the variant', variant],
  ] as const)
    if (g && g.output.errorLines > 0)
      problems.push(
        `${name} logged ${g.output.errorLines} error lines: ${g.output.samples.join('').slice(0, 500)}`,
      );
  const record: StreamsRecord = {
    scenario: 'streams',
    startedAt,
    git: readGitInfo(),
    machine: describeMachine({ loadAtStart, postgresVersion, redisReal: true }),
    settings,
    runs,
    comparisons: settings.streams.map((n) => compare(runs, n)),
    ours: {
      idleRssMb: idleMemoryMb.ours?.rss ?? 0,
      idlePssMb: idleMemoryMb.ours?.pss ?? null,
      peakRssMbProcess: peakRssMbProcess.ours,
      errorLines: ours.output.errorLines,
    },
    ...(variant
      ? {
          variant: {
            label: variantLabelOf(settings),
            idleRssMb: idleMemoryMb.variant?.rss ?? 0,
            idlePssMb: idleMemoryMb.variant?.pss ?? null,
            peakRssMbProcess: peakRssMbProcess.variant,
            errorLines: variant.output.errorLines,
          },
        }
      : {}),
    ...(portkey
      ? {
          portkey: {
            version: portkeyVersion(),
            idleRssMb: idleMemoryMb.portkey?.rss ?? 0,
            idlePssMb: idleMemoryMb.portkey?.pss ?? null,
            ...(portkeyFailed ? { failed: portkeyFailed } : {}),
          },
        }
      : {}),
    ...(floor
      ? { floor: { idleRssMb: idleMemoryMb.floor?.rss ?? 0, idlePssMb: idleMemoryMb.floor?.pss ?? null } }
      : {}),
    problems,
  };
  // Failed streams are a finding, not a reason to drop the run: they are in the table and the problems line.
  printOrRecord('streams', record, shouldRecord, chartOf, markdownOf);
  return !shouldRecord && problems.length ? 1 : 0;
}

runMain(main);
