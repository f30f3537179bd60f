import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVER_KEYS } from '@platform/gateway/testing';
import { runMain } from '../cli';
import { runLoad } from '../load/run-load';
import { parseEnvPairs, parsePeerCli, peerStores, sidesEnvText } from './cli';
import { cpuSplitMsOf, startOrClose } from './processes';
import { median, roundTo } from './record';
import { type OurGateway, startOurGateway, startUpstream } from './services';

const USAGE = `Usage: npm run ab -w @platform/bench -- --variant-script <path> [options]
  A quick A/B of two builds of our gateway on one request (no Portkey, no
  sequential or health runs): ours (apps/gateway/dist) and the variant, in
  alternating order, each its own production process in front of the same
  OpenAI fake. Prints CPU ms per request and req/s per round, their medians
  and the ratios. Not recorded: a result worth keeping is a \`peers\` run.
  --variant-script <path>  the other build's entry (e.g. an older commit's worktree)
  --variant-env "NAME=value ..."  added to the variant's environment
  --script <path>    ours from this entry instead of apps/gateway/dist/main.js (to profile
                     an older build as ours)
  --kind chat|stream  the request (default chat)
  --rounds <n>       rounds (default 6)
  --duration <s>     measured seconds per run (default 4)
  --warmup <s>       warm-up seconds per run (default 1)
  --connections <n>  connections (default 32)
  --direct           also run the OpenAI fake directly in every round, and print each
                     build's latency added over it (with --connections 1: a single caller's)
  --cpu-prof <dir>   profile ours (not the variant) into <dir>
  --settle <ms>      after every run, pause <ms> (with --sink: until the sink has had no
                     export for <ms>), so that work a run leaves behind (a traced side's
                     last exports, the sink's share) does not fall into the next run's window
  --sink <url>       the OTLP sink (bench/src/profile/otlp-sink.cjs), for --settle
  --gateway-node-args, --gateway-env: as for peers (ours, and the variant too: the variant
                     inherits them; turn tracing off there with --variant-env OTEL_SDK_DISABLED=true)
  --variant-node-args "<flags>"  the variant's node flags, after --gateway-node-args'
Needs TEST_DATABASE_URL and TEST_REDIS_URL and a built apps/gateway/dist.`;

type Side = 'ours' | 'variant' | 'direct';

/** Redis's own counters (redis-cli): commands, and client reads (one per batch of commands a client wrote). */
function redisCounters(redisUrl: string): { commands: number; reads: number; cpuMs: number } | null {
  try {
    const info = execFileSync('redis-cli', ['-u', redisUrl, 'info', 'stats'], { encoding: 'utf8' });
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? Number.NaN);
    const cpu = execFileSync('redis-cli', ['-u', redisUrl, 'info', 'cpu'], { encoding: 'utf8' });
    const seconds = (name: string) =>
      Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? Number.NaN);
    return {
      commands: field('total_commands_processed'),
      reads: field('total_reads_processed'),
      cpuMs: 1000 * (seconds('used_cpu_user') + seconds('used_cpu_sys')),
    };
  } catch {
    return null;
  }
}

/** CPU ms of every process named postgres on this machine (the shared server: only meaningful as a difference). */
function postgresCpuMs(): number {
  let ms = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ms += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // gone meanwhile
    }
  }
  return ms;
}

async function main(): Promise<number> {
  const { values, cpuProfArgs, gatewayNodeArgs, variantNodeArgs, gatewayEnv } = parsePeerCli(
    {
      'variant-script': { type: 'string' },
      script: { type: 'string' },
      'variant-env': { type: 'string', default: '' },
      kind: { type: 'string', default: 'chat' },
      rounds: { type: 'string', default: '6' },
      duration: { type: 'string', default: '4' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      direct: { type: 'boolean', default: false },
      settle: { type: 'string', default: '0' },
      sink: { type: 'string' },
    },
    USAGE,
  );
  const variantScript = values['variant-script'];
  if (!variantScript) throw new Error(`--variant-script is required\n${USAGE}`);
  const kind = values.kind === 'stream' ? 'stream' : 'chat';
  const rounds = Number(values.rounds);
  const { databaseServerUrl, redisUrl } = peerStores(USAGE);
  const variantEnv = { ...gatewayEnv, ...parseEnvPairs(values['variant-env']) };
  console.log(sidesEnvText(gatewayEnv, variantEnv));
  const settleMs = Number(values.settle);
  const sinkUrl = values.sink;
  const settle = async () => {
    if (!(settleMs > 0)) return;
    if (!sinkUrl) return new Promise((resolve) => setTimeout(resolve, settleMs));
    await fetch(`${sinkUrl.replace(/\/$/, '')}/idle?ms=${settleMs}`).then((r) => r.text());
  };
  const upstream = await startUpstream({});
  const ours = await startOrClose(
    startOurGateway(upstream, {
      databaseServerUrl,
      redisUrl,
      nodeArgs: [...cpuProfArgs, ...gatewayNodeArgs],
      env: gatewayEnv,
      ...(values.script ? { script: path.resolve(values.script) } : {}),
    }),
    [upstream],
  );
  const variant = await startOrClose(
    startOurGateway(upstream, {
      databaseServerUrl,
      redisUrl,
      nodeArgs: variantNodeArgs,
      env: variantEnv,
      script: path.resolve(variantScript),
    }),
    [upstream, ours],
  );
  const spec = (g: OurGateway) => ({
    url: `${g.url}/api/v1/ai/chat/${kind === 'stream' ? 'stream' : 'completions'}`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', 'x-api-key': g.apiKey },
    body: JSON.stringify({
      lane: 'free',
      project_id: 'bench',
      messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
    }),
  });
  // The fake as our gateway calls it (the free lane's first target), for the latency added over it.
  const direct = {
    url: `${upstream.baseURL}/chat/completions`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEYS.GROQ_API_KEY}` },
    body: JSON.stringify({
      model: 'free-a',
      messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
      ...(kind === 'stream' ? { stream: true } : {}),
    }),
  };
  const withDirect = values.direct === true;
  const specOf = (side: Side) => (side === 'direct' ? direct : spec(gateways[side]));
  const pidOf = (side: Side) => (side === 'direct' ? upstream.pid : gateways[side].pid);
  const gateways: Record<'ours' | 'variant', OurGateway> = { ours, variant };
  const results: Record<Side, { cpu: number[]; rps: number[]; p50: number[]; p99: number[] }> = {
    ours: { cpu: [], rps: [], p50: [], p99: [] },
    variant: { cpu: [], rps: [], p50: [], p99: [] },
    direct: { cpu: [], rps: [], p50: [], p99: [] },
  };
  try {
    for (const side of ['ours', 'variant'] as Side[]) {
      await runLoad(
        {
          ...specOf(side),
          connections: Number(values.connections),
          warmupSec: 1,
          durationSec: 4,
          timeoutSec: 10,
        },
        'child',
        () => undefined,
      );
    }
    for (let round = 1; round <= rounds; round += 1) {
      const order: Side[] = round % 2 === 1 ? ['ours', 'variant'] : ['variant', 'ours'];
      if (withDirect) order.splice(round % 3, 0, 'direct');
      for (const side of order) {
        const pid = pidOf(side);
        let cpuStart = { user: 0, system: 0 };
        let redisStart: ReturnType<typeof redisCounters> = null;
        let pgStart = 0;
        const r = await runLoad(
          {
            ...specOf(side),
            connections: Number(values.connections),
            warmupSec: Number(values.warmup),
            durationSec: Number(values.duration),
            timeoutSec: 10,
          },
          'child',
          () => {
            cpuStart = cpuSplitMsOf(pid);
            redisStart = redisCounters(redisUrl);
            pgStart = postgresCpuMs();
          },
        );
        const cpuEnd = cpuSplitMsOf(pid);
        const redisEnd = redisCounters(redisUrl);
        const pgEnd = postgresCpuMs();
        await settle();
        const perReq = (ms: number) => (r.requests > 0 ? ms / r.requests : 0);
        const sys = perReq(cpuEnd.system - cpuStart.system);
        const cpu = perReq(cpuEnd.user - cpuStart.user) + sys;
        const pgCpu = perReq(pgEnd - pgStart);
        const perRequest = (k: 'commands' | 'reads' | 'cpuMs') =>
          redisStart && redisEnd && r.requests > 0
            ? ((redisEnd[k] - redisStart[k]) / r.requests).toFixed(k === 'cpuMs' ? 3 : 2)
            : '?';
        const bad = r.errors + Object.entries(r.statuses).filter(([s]) => s !== '200').length;
        results[side].cpu.push(cpu);
        results[side].rps.push(r.requestsPerSec);
        results[side].p50.push(r.latencyMs.p50);
        results[side].p99.push(r.latencyMs.p99);
        console.log(
          `round ${round} ${side.padEnd(7)} ${r.requestsPerSec.toFixed(0).padStart(6)} req/s  p50 ${r.latencyMs.p50.toFixed(2)} p99 ${r.latencyMs.p99.toFixed(2)} ms  cpu ${cpu.toFixed(4)} ms/req (system ${sys.toFixed(4)})  redis ${perRequest('commands')} commands in ${perRequest('reads')} writes/req, redis cpu ${perRequest('cpuMs')}, postgres cpu ${pgCpu.toFixed(3)} ms/req${bad ? `  NOT ALL 200: ${JSON.stringify(r.statuses)}` : ''}`,
        );
      }
    }
  } finally {
    await Promise.allSettled([ours.close(), variant.close(), upstream.close()]);
  }
  const m = (side: Side, k: 'cpu' | 'rps' | 'p50' | 'p99') => median(results[side][k]);
  // Each round's own ratio, then their median: a slow spell of the machine moves both runs of a round.
  const paired = (k: 'cpu' | 'rps') =>
    roundTo(median(results.ours[k].map((v, i) => v / (results.variant[k][i] ?? Number.NaN))), 3);
  console.log(
    `median ours    ${m('ours', 'rps').toFixed(0)} req/s  cpu ${m('ours', 'cpu').toFixed(4)} ms/req\n` +
      `median variant ${m('variant', 'rps').toFixed(0)} req/s  cpu ${m('variant', 'cpu').toFixed(4)} ms/req\n` +
      `ours/variant: cpu ${roundTo(m('ours', 'cpu') / m('variant', 'cpu'), 3)}x, req/s ${roundTo(m('ours', 'rps') / m('variant', 'rps'), 3)}x\n` +
      `median of each round's ratio: cpu ${paired('cpu')}x, req/s ${paired('rps')}x\n` +
      `latency p50 / p99 ms: ours ${m('ours', 'p50').toFixed(2)} / ${m('ours', 'p99').toFixed(2)}, variant ${m('variant', 'p50').toFixed(2)} / ${m('variant', 'p99').toFixed(2)}`,
  );
  if (withDirect) {
    // Added over the fake in the same round, then the median over rounds (as peers' sequential added latency).
    const added = (side: 'ours' | 'variant', p: 'p50' | 'p99') =>
      roundTo(median(results[side][p].map((v, i) => v - (results.direct[p][i] ?? Number.NaN))), 2);
    console.log(
      `direct (the fake) p50 / p99 ${m('direct', 'p50').toFixed(2)} / ${m('direct', 'p99').toFixed(2)} ms; ` +
        `added over it (median of the rounds): ours +${added('ours', 'p50')} / +${added('ours', 'p99')}, ` +
        `variant +${added('variant', 'p50')} / +${added('variant', 'p99')}`,
    );
  }
  return 0;
}

runMain(main);
