import os from 'node:os';
import path from 'node:path';
import { SERVER_KEYS } from '@platform/gateway/testing';
import { runMain } from '../cli';
import { runLoad } from '../load/run-load';
import type { LoadResult, LoadSpec } from '../load/types';
import { describeMachine, type MachineInfo, readGitInfo } from '../report/machine';
import { COLORS, type Panel, renderBarChart } from '../report/svg';
import { parseEnvPairs, parsePeerCli, peerStores, sidesEnvText } from './cli';
import {
  cpuMsOf,
  memoryMbOf,
  processTreeOf,
  REPO_ROOT,
  type ServiceProcess,
  sampleRss,
  startOrClose,
} from './processes';
import { gatewaySettingsText, median, printOrRecord, round2, roundTo } from './record';
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

const USAGE = `Usage: npm run peers -w @platform/bench -- [options]
  Our gateway (built dist/, NODE_ENV=production, Postgres, Redis) and Portkey's
  open-source gateway side by side in front of the same OpenAI fake, each in its
  own process; alternating rounds, sequential (1 connection) and loaded.
  --rounds <n>       rounds (default 3)
  --duration <s>     measured seconds per run (default 4)
  --warmup <s>       warm-up seconds per run (default 1)
  --connections <n>  connections of the loaded runs (default 32)
  --cpu-prof <dir>   run our gateway under node --cpu-prof, profiles written to <dir>
  --gateway-node-args "<flags>"  extra node flags for our gateway (after the Dockerfile's)
  --gateway-env "NAME=value ..."  added to our gateway's environment (e.g. WORKERS=1)
  --variant-env "NAME=value ..."  also run a second instance of ours with these added (e.g.
                     WORKERS=1), measured in the same alternating rounds as "ours (variant)";
                     the variant inherits --gateway-env first (turn tracing named there off
                     for the variant with OTEL_SDK_DISABLED=true)
  --variant-script <path>  run the second instance from this built entry instead (e.g. the
                     commit before, its apps/gateway/dist copied to apps/gateway/dist-before):
                     two builds in the same alternating rounds; src/peers/floor-relay.js runs
                     the floor of a Node relay (no auth, limits, parsing or logs) instead
  --no-record        print only
Needs TEST_DATABASE_URL and TEST_REDIS_URL (or BENCH_REDIS_URL) and a built apps/gateway/dist.`;

type TargetName = 'direct' | 'portkey' | 'ours' | 'variant';
type Mode = 'sequential' | 'loaded';
type Kind = 'chat' | 'stream' | 'health';

/** One measured run of one target. */
export type PeerRun = {
  round: number;
  target: TargetName;
  mode: Mode;
  kind: Kind;
  requestsPerSec: number;
  latencyMs: LoadResult['latencyMs'];
  statuses: Record<string, number>;
  errors: number;
  /** CPU of the target's process (the fake's for direct) per response, ms. */
  cpuMsPerRequest: number;
};

type Summary = { requestsPerSec: number; p50: number; p90: number; p99: number; cpuMsPerRequest: number };

export type PeersRecord = {
  scenario: 'peers';
  startedAt: string;
  git: ReturnType<typeof readGitInfo>;
  machine: MachineInfo;
  settings: {
    rounds: number;
    durationSec: number;
    warmupSec: number;
    connections: number;
    gateway?: { nodeArgs: string[]; env: Record<string, string> };
    /** A second instance of ours, with this added to its environment, in the same rounds. */
    variantEnv?: Record<string, string>;
    /** The second instance runs this built entry (repository-relative) instead of apps/gateway/dist/main.js. */
    variantScript?: string;
  };
  versions: { portkey: string };
  /** Full responses of one request each, before the load: statuses and what went wrong. */
  preflight: Record<string, { status: number; ok: boolean; note: string }>;
  runs: PeerRun[];
  /** Median over rounds, per `${target} ${kind} ${mode}`. */
  summary: Record<string, Summary>;
  ratios: {
    loadedReqPerSecOursOverPortkey: number | null;
    loadedReqPerSecVariantOverPortkey?: number | null;
    loadedReqPerSecOursOverDirect: number;
    sequentialAddedMsOurs: { p50: number; p99: number };
    sequentialAddedMsPortkey: { p50: number; p99: number } | null;
  };
  ours: {
    logLinesPerRequest: number;
    errorLines: number;
    peakRssMb: number;
    variantPeakRssMb?: number;
    /** Idle after the preflight (IDLE_SEC), before any load: the whole tree, and each worker. */
    idleRssMb?: number;
    idleRssPerWorkerMb?: number[];
    variantIdleRssMb?: number;
    variantIdleRssPerWorkerMb?: number[];
    /**
     * PSS (smaps_rollup `Pss`; null off Linux; absent in older records): the
     * same readings with the pages the processes share (the node binary's)
     * split among them, i.e. what the tree costs the machine. The peak is the
     * highest of samples taken once a second from the warm-up to the end.
     */
    peakPssMb?: number | null;
    variantPeakPssMb?: number | null;
    idlePssMb?: number | null;
    idlePssPerWorkerMb?: Array<number | null>;
    variantIdlePssMb?: number | null;
    variantIdlePssPerWorkerMb?: Array<number | null>;
  };
  portkey: {
    peakRssMb: number;
    idleRssMb?: number;
    peakPssMb?: number | null;
    idlePssMb?: number | null;
  } | null;
  problems: string[];
};

const MESSAGES = [{ role: 'user', content: 'Say hello to the benchmark.' }];
/** Seconds every target idles after the preflight before its resident memory is read (V8's memory reducer runs after ~8 s). */
const IDLE_SEC = 10;

type IdleMemory = {
  tree: number;
  perWorker: number[];
  treePss: number | null;
  perWorkerPss: Array<number | null>;
};

/** RSS and PSS in MB of a process tree, and of each process under its primary (a worker; the process itself when it is alone). */
function idleMemoryOf(pid: number): IdleMemory {
  const tree = processTreeOf(pid);
  const workers = tree.length > 1 ? tree.slice(1) : tree;
  const all = memoryMbOf(pid, tree);
  const each = workers.map((w) => memoryMbOf(w, [w]));
  return {
    tree: all.rss,
    perWorker: each.map((m) => m.rss),
    treePss: all.pss,
    perWorkerPss: each.map((m) => m.pss),
  };
}

/** Seconds of unmeasured load on every target before the first round. */
const WARM_SEC = 4;
/** The key our gateway sends to groq (free-a), so the direct runs authenticate as it does. */
const UPSTREAM_KEY = SERVER_KEYS.GROQ_API_KEY;

function requestFor(
  target: TargetName,
  kind: Kind,
  s: { upstream: Upstream; portkey?: ServiceProcess; ours: OurGateway; variant?: OurGateway },
): Pick<LoadSpec, 'url' | 'method' | 'headers' | 'body'> {
  const stream = kind === 'stream';
  const openaiBody = JSON.stringify({
    model: 'free-a',
    messages: MESSAGES,
    ...(stream ? { stream: true } : {}),
  });
  if (target === 'direct') {
    return {
      url: `${s.upstream.baseURL}/chat/completions`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` },
      body: openaiBody,
    };
  }
  if (target === 'portkey') {
    if (!s.portkey) throw new Error('portkey is not running');
    return {
      url: `${s.portkey.url}/v1/chat/completions`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${UPSTREAM_KEY}`,
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': s.upstream.baseURL,
      },
      body: openaiBody,
    };
  }
  const ours = target === 'variant' ? s.variant : s.ours;
  if (!ours) throw new Error('the variant is not running');
  if (kind === 'health') return { url: `${ours.url}/health`, method: 'GET', headers: {} };
  return {
    url: `${ours.url}/api/v1/ai/chat/${stream ? 'stream' : 'completions'}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': ours.apiKey },
    body: JSON.stringify({ lane: 'free', project_id: 'bench', messages: MESSAGES }),
  };
}

/** One request before the load: does the target answer this request properly at all? */
async function preflight(
  spec: Pick<LoadSpec, 'url' | 'method' | 'headers' | 'body'>,
  kind: Kind,
): Promise<{ status: number; ok: boolean; note: string }> {
  try {
    const init: RequestInit = { method: spec.method, headers: spec.headers };
    if (spec.body !== undefined) init.body = spec.body;
    const res = await fetch(spec.url, init);
    const body = await res.text();
    const ok =
      res.status === 200 &&
      (kind === 'health'
        ? body.includes('"ok"')
        : kind === 'stream'
          ? (res.headers.get('content-type') ?? '').startsWith('text/event-stream') && body.includes('Hello')
          : body.includes('Hello from the OpenAI fake.'));
    return { status: res.status, ok, note: ok ? '' : body.slice(0, 300) };
  } catch (err) {
    return { status: 0, ok: false, note: (err as Error).message };
  }
}

async function measure(
  target: TargetName,
  mode: Mode,
  kind: Kind,
  round: number,
  pid: number,
  spec: Pick<LoadSpec, 'url' | 'method' | 'headers' | 'body'>,
  settings: PeersRecord['settings'],
): Promise<PeerRun> {
  let cpuStart = 0;
  const result = await runLoad(
    {
      ...spec,
      connections: mode === 'sequential' ? 1 : settings.connections,
      warmupSec: settings.warmupSec,
      durationSec: settings.durationSec,
      timeoutSec: 10,
    },
    'child',
    () => {
      cpuStart = cpuMsOf(pid);
    },
  );
  const cpu = cpuMsOf(pid) - cpuStart;
  return {
    round,
    target,
    mode,
    kind,
    requestsPerSec: result.requestsPerSec,
    latencyMs: result.latencyMs,
    statuses: result.statuses,
    errors: result.errors + result.warmup.errors,
    cpuMsPerRequest: result.requests > 0 ? roundTo(cpu / result.requests, 4) : 0,
  };
}

function summarise(runs: PeerRun[]): Record<string, Summary> {
  const groups = new Map<string, PeerRun[]>();
  for (const r of runs) {
    const key = `${r.target} ${r.kind} ${r.mode}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: Record<string, Summary> = {};
  for (const [key, group] of groups) {
    out[key] = {
      requestsPerSec: round2(median(group.map((r) => r.requestsPerSec))),
      p50: round2(median(group.map((r) => r.latencyMs.p50))),
      p90: round2(median(group.map((r) => r.latencyMs.p90))),
      p99: round2(median(group.map((r) => r.latencyMs.p99))),
      cpuMsPerRequest: roundTo(median(group.map((r) => r.cpuMsPerRequest)), 3),
    };
  }
  return out;
}

function parseCli() {
  const { values, cpuProfArgs, gatewayNodeArgs, gatewayEnv, record } = parsePeerCli(
    {
      'variant-env': { type: 'string', default: '' },
      'variant-script': { type: 'string' },
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '4' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
    },
    USAGE,
  );
  return {
    settings: {
      rounds: Number(values.rounds),
      durationSec: Number(values.duration),
      warmupSec: Number(values.warmup),
      connections: Number(values.connections),
      /** What was added to ours' production command line and environment (none in a recorded default run). */
      gateway: { nodeArgs: gatewayNodeArgs, env: gatewayEnv },
      ...(values['variant-env'] ? { variantEnv: parseEnvPairs(values['variant-env']) } : {}),
      ...(values['variant-script']
        ? { variantScript: path.relative(REPO_ROOT, path.resolve(values['variant-script'])) }
        : {}),
    },
    cpuProfArgs,
    gatewayNodeArgs,
    gatewayEnv,
    record,
  };
}

function markdownOf(r: PeersRecord, files: { json: string; svg: string } | null): string {
  const m = r.machine;
  const row = (key: string, label: string) => {
    const s = r.summary[key];
    return s
      ? `| ${label} | ${s.requestsPerSec} | ${s.p50} | ${s.p90} | ${s.p99} | ${s.cpuMsPerRequest} |`
      : `| ${label} | – | – | – | – | – |`;
  };
  const pk = r.ratios.sequentialAddedMsPortkey;
  const variantLabel = variantLabelOf(r.settings);
  const variantRow = (what: string) =>
    variantLabel ? [row(`variant ${what}`, `${variantLabel}, ${what.replace(' ', ', ')}`)] : [];
  const lines = [
    `## Peers: ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${r.git.sha}${r.git.dirtyFiles.length ? ` + ${r.git.dirtyFiles.length} uncommitted files` : ''}`,
    '',
    `Node ${m.node}, ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}; Postgres ${m.postgres.version}, Redis real; load average ${m.loadAverage.start} -> ${m.loadAverage.end}.`,
    `Each in its own process on loopback: the OpenAI fake (upstream), Portkey ${r.versions.portkey} (\`NODE_ENV=production\`, headless), ours (\`${PRODUCTION_GATEWAY_ENV_TEXT ? `${PRODUCTION_GATEWAY_ENV_TEXT} ` : ''}node ${PRODUCTION_NODE_ARGS.join(' ')} apps/gateway/dist/main.js\` (the Dockerfile's flags and environment), \`NODE_ENV=production\`, ${gatewaySettingsText(r.settings.gateway)}, Postgres, Redis, API key, limits and usage recording on, info logs to a pipe), autocannon in a child process. ${r.settings.rounds} alternating rounds (after ${WARM_SEC} s of unmeasured loaded warm-up of every target) of ${r.settings.warmupSec} s warm-up + ${r.settings.durationSec} s per run; sequential = 1 keep-alive connection, loaded = ${r.settings.connections} connections. Medians over rounds; latency in ms; CPU ms/req is the target process's CPU (the fake's for direct).${files ? ` Files: [${files.json}](${files.json}), chart [${files.svg}](${files.svg}).` : ''}`,
    '',
    files ? `![peers chart](${files.svg})\n` : '',
    '| target, request, mode | req/s | p50 | p90 | p99 | CPU ms/req |',
    '|---|--:|--:|--:|--:|--:|',
    row('direct chat sequential', 'direct (fake), chat, sequential'),
    row('portkey chat sequential', 'Portkey, chat, sequential'),
    row('ours chat sequential', 'ours, chat, sequential'),
    ...variantRow('chat sequential'),
    row('direct chat loaded', 'direct (fake), chat, loaded'),
    row('portkey chat loaded', 'Portkey, chat, loaded'),
    row('ours chat loaded', 'ours, chat, loaded'),
    ...variantRow('chat loaded'),
    row('direct stream loaded', 'direct (fake), stream, loaded'),
    row('portkey stream loaded', 'Portkey, stream, loaded'),
    row('ours stream loaded', 'ours, stream, loaded'),
    ...variantRow('stream loaded'),
    row('ours health loaded', 'ours, GET /health, loaded'),
    ...variantRow('health loaded'),
    '',
    `Ratios: loaded req/s ours/Portkey **${r.ratios.loadedReqPerSecOursOverPortkey ?? '–'}** (target ≥ 3)${variantLabel ? ` (${variantLabel}: ${r.ratios.loadedReqPerSecVariantOverPortkey ?? '–'})` : ''}, ours/direct ${r.ratios.loadedReqPerSecOursOverDirect}. Sequential added latency over direct: ours p50 **+${r.ratios.sequentialAddedMsOurs.p50}** ms / p99 **+${r.ratios.sequentialAddedMsOurs.p99}** ms (targets ≤ 0.3 / ≤ 2)${pk ? `, Portkey +${pk.p50} / +${pk.p99}` : ''}.`,
    `Ours: ${r.ours.logLinesPerRequest} log lines per chat request (approx.; /health is not logged), ${r.ours.errorLines} error lines, peak RSS ${r.ours.peakRssMb} MB${r.ours.variantPeakRssMb !== undefined ? ` (${variantLabel}: ${r.ours.variantPeakRssMb} MB)` : ''}${r.portkey ? `; Portkey peak RSS ${r.portkey.peakRssMb} MB` : ''}.`,
    r.ours.idleRssMb !== undefined
      ? `Resident memory idle (${IDLE_SEC} s after the preflight, before any load): ours ${r.ours.idleRssMb} MB (per worker ${r.ours.idleRssPerWorkerMb?.join(', ')})${r.ours.variantIdleRssMb !== undefined ? `, ${variantLabel} ${r.ours.variantIdleRssMb} MB (per worker ${r.ours.variantIdleRssPerWorkerMb?.join(', ')})` : ''}${r.portkey?.idleRssMb !== undefined ? `, Portkey ${r.portkey.idleRssMb} MB` : ''}.`
      : '',
    r.ours.idlePssMb !== undefined
      ? `PSS (shared pages, the node binary's, split among a tree's processes: what each tree costs the machine; the RSS sums above count them once per process): idle ours ${r.ours.idlePssMb ?? '–'} MB (per worker ${r.ours.idlePssPerWorkerMb?.map((v) => v ?? '–').join(', ')})${r.ours.variantIdlePssMb !== undefined ? `, ${variantLabel} ${r.ours.variantIdlePssMb ?? '–'} MB` : ''}${r.portkey?.idlePssMb !== undefined ? `, Portkey ${r.portkey.idlePssMb ?? '–'} MB` : ''}; peak (sampled once a second) ours ${r.ours.peakPssMb ?? '–'} MB${r.ours.variantPeakPssMb !== undefined ? `, ${variantLabel} ${r.ours.variantPeakPssMb ?? '–'} MB` : ''}${r.portkey?.peakPssMb !== undefined ? `, Portkey ${r.portkey.peakPssMb ?? '–'} MB` : ''}.`
      : '',
    `Preflight: ${Object.entries(r.preflight)
      .map(
        ([k, v]) =>
          `${k} ${v.status}${v.ok ? '' : ` (NOT OK: ${v.note.replace(/\s+/g, ' ').slice(0, 160)})`}`,
      )
      .join('; ')}.`,
    r.problems.length ? `Problems: ${r.problems.join('; ')}.` : '',
    '',
  ];
  return lines.filter((l, i) => l !== '' || lines[i - 1] !== '').join('\n');
}

/** Resident memory per target: idle (per worker for ours) and the run's peak, whole process trees. */
function memoryPanel(r: PeersRecord): Panel[] {
  if (r.ours.idleRssMb === undefined) return [];
  const variantLabel = variantLabelOf(r.settings);
  const perWorker = (list: number[] | undefined) => (list?.length ? Math.max(...list) : 0);
  const bars = [
    ...(r.portkey?.idleRssMb !== undefined
      ? [
          { label: 'Portkey idle', value: r.portkey.idleRssMb, color: COLORS.portkey },
          { label: 'Portkey peak', value: r.portkey.peakRssMb, color: COLORS.portkey },
        ]
      : []),
    { label: 'ours idle, per worker', value: perWorker(r.ours.idleRssPerWorkerMb), color: COLORS.ours },
    { label: 'ours idle, all', value: r.ours.idleRssMb, color: COLORS.ours },
    { label: 'ours peak, all', value: r.ours.peakRssMb, color: COLORS.ours },
    ...(r.ours.variantIdleRssMb !== undefined
      ? [
          {
            label: `${variantLabel} idle, per worker`,
            value: perWorker(r.ours.variantIdleRssPerWorkerMb),
            color: COLORS.variant,
          },
          { label: `${variantLabel} idle, all`, value: r.ours.variantIdleRssMb, color: COLORS.variant },
          { label: `${variantLabel} peak, all`, value: r.ours.variantPeakRssMb ?? 0, color: COLORS.variant },
        ]
      : []),
  ];
  return [{ title: 'Resident memory, MB: idle and the run’s peak (lower is better)', unit: 'MB', bars }];
}

function chartOf(r: PeersRecord): string {
  const s = (key: string) => r.summary[key];
  const bars = (kind: Kind, mode: Mode, field: keyof Summary) =>
    (['direct', 'portkey', 'ours', 'variant'] as const)
      .filter((t) => s(`${t} ${kind} ${mode}`))
      .map((t) => ({
        label:
          t === 'direct'
            ? 'direct (fake)'
            : t === 'portkey'
              ? 'Portkey'
              : t === 'ours'
                ? 'ours'
                : variantLabelOf(r.settings),
        value: s(`${t} ${kind} ${mode}`)?.[field] ?? 0,
        color: COLORS[t],
      }));
  const added = (t: 'portkey' | 'ours' | 'variant', p: 'p50' | 'p99') =>
    (s(`${t} chat sequential`)?.[p] ?? 0) - (s(`direct chat sequential`)?.[p] ?? 0);
  return renderBarChart(
    `Gateway vs Portkey, same OpenAI fake, ${r.startedAt.slice(0, 10)} (${r.git.sha})`,
    [
      `${r.machine.cores} cores ${r.machine.cpuModel}, Node ${r.machine.node}, load avg ${r.machine.loadAverage.start}; medians of ${r.settings.rounds} alternating rounds.`,
      `Loaded: ours/Portkey ${r.ratios.loadedReqPerSecOursOverPortkey ?? '–'}x req/s. Sequential added latency: ours +${r.ratios.sequentialAddedMsOurs.p50} ms p50, +${r.ratios.sequentialAddedMsOurs.p99} ms p99.`,
    ],
    [
      {
        title: `Chat, ${r.settings.connections} connections: requests per second (higher is better)`,
        unit: 'req/s',
        bars: bars('chat', 'loaded', 'requestsPerSec').filter((b) => b.label !== 'direct (fake)'),
      },
      {
        title: 'Chat, one connection: latency added over direct, p50 and p99 (lower is better)',
        unit: 'ms',
        bars: (['portkey', 'ours', 'variant'] as const)
          .filter((t) => s(`${t} chat sequential`))
          .flatMap((t) =>
            (['p50', 'p99'] as const).map((p) => ({
              label: `${t === 'ours' ? 'ours' : t === 'portkey' ? 'Portkey' : variantLabelOf(r.settings)} ${p}`,
              value: round2(added(t, p)),
              color: COLORS[t],
            })),
          ),
      },
      ...memoryPanel(r),
      {
        title: `Streaming chat, ${r.settings.connections} connections: requests per second`,
        unit: 'req/s',
        bars: [
          ...bars('stream', 'loaded', 'requestsPerSec').filter((b) => b.label !== 'direct (fake)'),
          ...(r.preflight['portkey stream']?.ok
            ? []
            : [
                {
                  label: 'Portkey',
                  value: 0,
                  color: COLORS.portkey,
                  note: `(fails: HTTP ${r.preflight['portkey stream']?.status})`,
                },
              ]),
        ],
      },
    ],
  );
}

async function main(): Promise<number> {
  const { settings, cpuProfArgs, gatewayNodeArgs, gatewayEnv, record: shouldRecord } = parseCli();
  const { databaseServerUrl, redisUrl } = peerStores(USAGE);
  if (settings.variantEnv || settings.variantScript)
    console.log(sidesEnvText(gatewayEnv, { ...gatewayEnv, ...settings.variantEnv }));
  const loadAtStart = round2(os.loadavg()[0] ?? 0);
  const startedAt = new Date().toISOString();
  const upstream = await startUpstream({});
  const ours = await startOrClose(
    startOurGateway(upstream, {
      databaseServerUrl,
      redisUrl,
      nodeArgs: [...cpuProfArgs, ...gatewayNodeArgs],
      env: gatewayEnv,
    }),
    [upstream],
  );
  const portkey = await startOrClose(startPortkey(), [upstream, ours]);
  const variant = variantLabelOf(settings)
    ? await startOrClose(
        startOurGateway(upstream, {
          databaseServerUrl,
          redisUrl,
          nodeArgs: gatewayNodeArgs,
          env: { ...gatewayEnv, ...settings.variantEnv },
          ...(settings.variantScript ? { script: path.join(REPO_ROOT, settings.variantScript) } : {}),
        }),
        [upstream, ours, portkey],
      )
    : undefined;
  const services = { upstream, portkey, ours, variant };
  const pids: Record<TargetName, number> = {
    direct: upstream.pid,
    portkey: portkey.pid,
    ours: ours.pid,
    variant: variant?.pid ?? 0,
  };
  const gateways: TargetName[] = variant ? ['ours', 'variant'] : ['ours'];
  const runs: PeerRun[] = [];
  const problems: string[] = [];
  const preflightResults: PeersRecord['preflight'] = {};
  let oursRequests = 0;
  const peaks = { ours: 0, portkey: 0, variant: 0 };
  const idle: Partial<Record<'ours' | 'portkey' | 'variant', IdleMemory>> = {};
  /** PSS has no high-water mark: each tree sampled once a second from the warm-up on (RSS peaks are VmHWM). */
  const pssSamplers: Partial<Record<'ours' | 'portkey' | 'variant', ReturnType<typeof sampleRss>>> = {};
  const peakPss: Partial<Record<'ours' | 'portkey' | 'variant', number | null>> = {};
  let postgresVersion: string | null = null;
  // Set after the warm-up: only the measured rounds' requests are counted against their lines.
  let linesBefore = ours.output.lines;
  try {
    for (const target of ['direct', 'portkey', ...gateways] as TargetName[]) {
      for (const kind of ['chat', 'stream'] as const) {
        preflightResults[`${target} ${kind}`] = await preflight(requestFor(target, kind, services), kind);
      }
    }
    for (const target of gateways)
      preflightResults[`${target} health`] = await preflight(
        requestFor(target, 'health', services),
        'health',
      );
    for (const [name, p] of Object.entries(preflightResults)) {
      if (!p.ok && name !== 'portkey stream') problems.push(`preflight ${name}: ${p.status} ${p.note}`);
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
    await new Promise((resolve) => setTimeout(resolve, IDLE_SEC * 1000));
    idle.ours = idleMemoryOf(ours.pid);
    idle.portkey = idleMemoryOf(portkey.pid);
    if (variant) idle.variant = idleMemoryOf(variant.pid);
    pssSamplers.ours = sampleRss(ours.pid, 1000, 1000);
    pssSamplers.portkey = sampleRss(portkey.pid, 1000, 1000);
    if (variant) pssSamplers.variant = sampleRss(variant.pid, 1000, 1000);
    const streamTargets: TargetName[] = preflightResults['portkey stream']?.ok
      ? ['direct', 'portkey', ...gateways]
      : ['direct', ...gateways];
    // Every target warm before round 1 (production processes are): a loaded chat run, and for
    // ours a loaded stream run, not measured; with workers, each gets a share of the connections.
    for (const target of ['direct', 'portkey', ...gateways] as TargetName[]) {
      const kinds: Kind[] = target === 'ours' || target === 'variant' ? ['chat', 'stream'] : ['chat'];
      for (const kind of kinds)
        await runLoad(
          {
            ...requestFor(target, kind, services),
            connections: settings.connections,
            warmupSec: 1,
            durationSec: WARM_SEC,
            timeoutSec: 10,
          },
          'child',
          () => undefined,
        );
    }
    linesBefore = ours.output.lines;
    for (let round = 1; round <= settings.rounds; round += 1) {
      const rotate = <T>(list: T[]) => list.map((_, i) => list[(i + round - 1) % list.length] as T);
      const order = rotate<TargetName>(['direct', 'portkey', ...gateways]);
      const plan: Array<[TargetName, Mode, Kind]> = [
        ...order.map((t): [TargetName, Mode, Kind] => [t, 'sequential', 'chat']),
        ...order.map((t): [TargetName, Mode, Kind] => [t, 'loaded', 'chat']),
        ...rotate(streamTargets).map((t): [TargetName, Mode, Kind] => [t, 'loaded', 'stream']),
        // The variant too: each peak RSS then covers the same phases (a /health run at ~28k req/s raised
        // ours' summed peak by ~300 MB over a variant of the very same build that skipped it).
        ...gateways.map((t): [TargetName, Mode, Kind] => [t, 'loaded', 'health']),
      ];
      for (const [target, mode, kind] of plan) {
        const run = await measure(
          target,
          mode,
          kind,
          round,
          pids[target],
          requestFor(target, kind, services),
          settings,
        );
        runs.push(run);
        const other = Object.keys(run.statuses).filter((st) => st !== '200');
        if (other.length > 0 || run.errors > 0)
          problems.push(
            `round ${round} ${target} ${kind} ${mode}: statuses ${JSON.stringify(run.statuses)}, ${run.errors} errors`,
          );
        if (target === 'ours' && kind !== 'health')
          oursRequests +=
            Object.values(run.statuses).reduce((a, b) => a + b, 0) *
            (1 + settings.warmupSec / settings.durationSec);
        console.log(
          `round ${round} ${target.padEnd(7)} ${kind.padEnd(6)} ${mode.padEnd(10)} ${String(run.requestsPerSec).padStart(8)} req/s  p50 ${run.latencyMs.p50}  p90 ${run.latencyMs.p90}  p99 ${run.latencyMs.p99} ms  cpu ${run.cpuMsPerRequest} ms/req`,
        );
      }
    }
  } finally {
    for (const [name, sampler] of Object.entries(pssSamplers))
      peakPss[name as keyof typeof pssSamplers] = sampler.stop().pss;
    peaks.ours = memoryMbOf(ours.pid).peak;
    peaks.portkey = memoryMbOf(portkey.pid).peak;
    if (variant) peaks.variant = memoryMbOf(variant.pid).peak;
    postgresVersion = await serverVersion(ours);
    await variant?.close();
    await ours.close();
    await portkey.close();
    await upstream.close();
  }
  if (ours.output.errorLines > 0)
    problems.push(
      `ours logged ${ours.output.errorLines} error lines: ${ours.output.samples.join('').slice(0, 500)}`,
    );
  const summary = summarise(runs);
  const get = (k: string) => summary[k];
  const direct = get('direct chat sequential');
  const oursSeq = get('ours chat sequential');
  const pkSeq = get('portkey chat sequential');
  const record: PeersRecord = {
    scenario: 'peers',
    startedAt,
    git: readGitInfo(),
    machine: describeMachine({ loadAtStart, postgresVersion, redisReal: true }),
    settings,
    versions: { portkey: portkeyVersion() },
    preflight: preflightResults,
    runs,
    summary,
    ratios: {
      loadedReqPerSecOursOverPortkey: get('portkey chat loaded')
        ? round2(
            (get('ours chat loaded')?.requestsPerSec ?? 0) /
              (get('portkey chat loaded')?.requestsPerSec ?? 1),
          )
        : null,
      ...(variant
        ? {
            loadedReqPerSecVariantOverPortkey: get('portkey chat loaded')
              ? round2(
                  (get('variant chat loaded')?.requestsPerSec ?? 0) /
                    (get('portkey chat loaded')?.requestsPerSec ?? 1),
                )
              : null,
          }
        : {}),
      loadedReqPerSecOursOverDirect: roundTo(
        (get('ours chat loaded')?.requestsPerSec ?? 0) / (get('direct chat loaded')?.requestsPerSec ?? 1),
        3,
      ),
      sequentialAddedMsOurs: {
        p50: round2((oursSeq?.p50 ?? 0) - (direct?.p50 ?? 0)),
        p99: round2((oursSeq?.p99 ?? 0) - (direct?.p99 ?? 0)),
      },
      sequentialAddedMsPortkey: pkSeq
        ? { p50: round2(pkSeq.p50 - (direct?.p50 ?? 0)), p99: round2(pkSeq.p99 - (direct?.p99 ?? 0)) }
        : null,
    },
    ours: {
      logLinesPerRequest: oursRequests > 0 ? roundTo((ours.output.lines - linesBefore) / oursRequests, 2) : 0,
      errorLines: ours.output.errorLines,
      peakRssMb: peaks.ours,
      ...(variant ? { variantPeakRssMb: peaks.variant } : {}),
      ...(idle.ours ? { idleRssMb: idle.ours.tree, idleRssPerWorkerMb: idle.ours.perWorker } : {}),
      ...(idle.variant
        ? { variantIdleRssMb: idle.variant.tree, variantIdleRssPerWorkerMb: idle.variant.perWorker }
        : {}),
      ...('ours' in peakPss ? { peakPssMb: peakPss.ours } : {}),
      ...('variant' in peakPss ? { variantPeakPssMb: peakPss.variant } : {}),
      ...(idle.ours ? { idlePssMb: idle.ours.treePss, idlePssPerWorkerMb: idle.ours.perWorkerPss } : {}),
      ...(idle.variant
        ? { variantIdlePssMb: idle.variant.treePss, variantIdlePssPerWorkerMb: idle.variant.perWorkerPss }
        : {}),
    },
    portkey: {
      peakRssMb: peaks.portkey,
      ...(idle.portkey ? { idleRssMb: idle.portkey.tree, idlePssMb: idle.portkey.treePss } : {}),
      ...('portkey' in peakPss ? { peakPssMb: peakPss.portkey } : {}),
    },
    problems,
  };
  if (problems.length > 0) {
    console.error(`NOT RECORDED:\n${problems.join('\n')}`);
    console.log(markdownOf(record, null));
    return 1;
  }
  printOrRecord('peers', record, shouldRecord, chartOf, markdownOf);
  return 0;
}

async function serverVersion(ours: OurGateway): Promise<string | null> {
  const [row] = await ours.database.db
    .query<{ server_version: string }>('SHOW server_version')
    .catch(() => [] as { server_version: string }[]);
  return row?.server_version ?? null;
}

/** How the second instance of ours differs ('' when there is none), e.g. "ours with WORKERS=1". */
function variantLabelOf(settings: PeersRecord['settings']): string {
  // The floor relay is not ours: a bare Node relay for reference (see floor-relay.js).
  if (settings.variantScript?.endsWith('floor-relay.js')) return 'Node floor (bare relay, floor-relay.js)';
  const parts = [
    settings.variantScript ? `from ${settings.variantScript}` : '',
    settings.variantEnv ? `with ${envText(settings.variantEnv)}` : '',
  ].filter(Boolean);
  return parts.length ? `ours ${parts.join(' ')}` : '';
}

function envText(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

runMain(main);
