import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runMain } from '../cli';
import { parseEnvPairs, parsePeerCli, peerStores } from './cli';
import { processTreeOf, pssKbOf, REPO_ROOT, startOrClose } from './processes';
import { median } from './record';
import { type OurGateway, startOurGateway, startUpstream } from './services';

const USAGE = `Usage: npm run idle-rss -w @platform/bench -- [options]
  Resident memory of our gateway as production starts it (built dist/,
  NODE_ENV=production, the Dockerfile's node flags, Postgres, Redis, the
  default WORKERS=auto), per process, after a full garbage collection:
  "fresh" (started, then idle), then "after chat" (one chat, one stream and
  one OpenAI-compatible chat per worker, then idle). Each worker collects
  garbage (V8's last-resort collection) on a signal (src/profile/memory-hook.cjs) and reports the packages
  it has loaded. Alternating rounds when --variant-script is given.
  --variant-script <path>  a second build (e.g. /work/before/apps/gateway/dist/main.js)
  --variant-env "NAME=value ..."  added to the variant's environment
  --variant-node-args "<flags>"  the variant's node flags, after --gateway-node-args'
  --rounds <n>       rounds (default 3)
  --idle <s>         idle seconds before each reading (default 10: V8's memory reducer runs)
  --modules          print the packages each worker loaded (fresh and after chat)
  --gateway-env, --gateway-node-args: as for peers
Prints a markdown table (not recorded: paste it into bench/results/README.md).`;

type Reading = {
  /** VmRSS of each worker (or of the single process), MB. */
  workersMb: number[];
  primaryMb: number | null;
  treeMb: number;
  /**
   * PSS (smaps_rollup `Pss`) of the same processes, MB: the pages they share
   * (the node binary's) split among them, so the tree's sum is what it costs
   * the machine, where the RSS sum counts those pages once per process. Null off Linux.
   */
  workersPssMb: Array<number | null>;
  primaryPssMb: number | null;
  treePssMb: number | null;
  /** The first worker's RSS before the GC (what it holds idle on its own), MB. */
  beforeGcMb: number;
  /** process.memoryUsage() of the first worker after GC, MB. */
  heapUsedMb: number;
  heapTotalMb: number;
  /** V8's young generation (committed) of the first worker after GC, MB. */
  newSpaceMb: number;
  externalMb: number;
  modules: Record<string, number>;
};

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

function rssKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Signals every process of the tree to collect garbage and report, then reads their RSS. */
async function readTree(gateway: OurGateway, dir: string, idleSec: number): Promise<Reading> {
  await sleep(idleSec * 1000);
  const tree = processTreeOf(gateway.pid);
  const workers = tree.length > 1 ? tree.slice(1) : tree;
  const sent = Date.now();
  for (const pid of tree) process.kill(pid, 'SIGUSR2');
  const fresh = (f: string) => statSync(path.join(dir, f)).mtimeMs >= sent - 5;
  const written = () =>
    readdirSync(dir).filter((f) => workers.some((pid) => f === `memory-${pid}.json`) && fresh(f));
  for (let waited = 0; written().length < workers.length && waited < 10_000; waited += 100) await sleep(100);
  await sleep(300);
  const reports = readdirSync(dir)
    .filter((f) => workers.some((pid) => f === `memory-${pid}.json`))
    .map(
      (f) =>
        JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as {
          before: { rss: number };
          newSpace: number;
          memory: NodeJS.MemoryUsage;
          modules: Record<string, number>;
        },
    );
  const first = reports[0];
  // One read of each process's smaps_rollup (a page-table walk): the workers', the primary's and the
  // tree's figures come from the same sample.
  const pssKb = new Map(tree.map((pid) => [pid, pssKbOf(pid)]));
  const pss = (pid: number) => {
    const kb = pssKb.get(pid) ?? null;
    return kb === null ? null : mb(kb * 1024);
  };
  const pssKbs = [...pssKb.values()];
  return {
    workersPssMb: workers.map(pss),
    primaryPssMb: tree.length > 1 ? pss(gateway.pid) : null,
    treePssMb: pssKbs.some((kb) => kb === null)
      ? null
      : mb(pssKbs.reduce<number>((sum, kb) => sum + (kb ?? 0), 0) * 1024),
    workersMb: workers.map((pid) => mb(rssKb(pid) * 1024)),
    primaryMb: tree.length > 1 ? mb(rssKb(gateway.pid) * 1024) : null,
    treeMb: mb(tree.reduce((sum, pid) => sum + rssKb(pid), 0) * 1024),
    beforeGcMb: first ? mb(first.before.rss) : 0,
    heapUsedMb: first ? mb(first.memory.heapUsed) : 0,
    heapTotalMb: first ? mb(first.memory.heapTotal) : 0,
    newSpaceMb: first ? mb(first.newSpace) : 0,
    externalMb: first ? mb(first.memory.external + first.memory.arrayBuffers) : 0,
    modules: first?.modules ?? {},
  };
}

/** A chat, a stream and an OpenAI-compatible chat per worker (connections are spread over the workers). */
async function chatOnce(gateway: OurGateway, workers: number): Promise<void> {
  const messages = [{ role: 'user', content: 'Say hello to the memory bench.' }];
  const native = JSON.stringify({ lane: 'free', project_id: 'bench', messages });
  for (let i = 0; i < workers * 4; i += 1) {
    const calls = [
      fetch(`${gateway.url}/api/v1/ai/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gateway.apiKey, connection: 'close' },
        body: native,
      }),
      fetch(`${gateway.url}/api/v1/ai/chat/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gateway.apiKey, connection: 'close' },
        body: native,
      }),
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${gateway.apiKey}`,
          connection: 'close',
        },
        body: JSON.stringify({ model: 'free-a', messages }),
      }),
    ];
    for (const res of await Promise.all(calls)) {
      const body = await res.text();
      if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${body.slice(0, 300)}`);
    }
  }
}

type Side = { label: string; script?: string; env: Record<string, string>; nodeArgs: string[] };

async function main(): Promise<number> {
  const { values, gatewayNodeArgs, variantNodeArgs, gatewayEnv } = parsePeerCli(
    {
      'variant-script': { type: 'string' },
      'variant-env': { type: 'string', default: '' },
      rounds: { type: 'string', default: '3' },
      idle: { type: 'string', default: '10' },
      modules: { type: 'boolean', default: false },
    },
    USAGE,
  );
  const { databaseServerUrl, redisUrl } = peerStores(USAGE);
  const hook = path.join(REPO_ROOT, 'bench', 'src', 'profile', 'memory-hook.cjs');
  const sides: Side[] = [{ label: 'ours', env: gatewayEnv, nodeArgs: gatewayNodeArgs }];
  const extraArgs = variantNodeArgs.slice(gatewayNodeArgs.length);
  if (values['variant-script'] || values['variant-env'] || extraArgs.length > 0)
    sides.push({
      label: values['variant-script']
        ? path.relative(REPO_ROOT, path.resolve(values['variant-script']))
        : ['variant', values['variant-env'], ...extraArgs].filter(Boolean).join(' '),
      nodeArgs: variantNodeArgs,
      ...(values['variant-script'] ? { script: path.resolve(values['variant-script']) } : {}),
      env: { ...gatewayEnv, ...parseEnvPairs(values['variant-env']) },
    });
  const readings = new Map<string, Array<{ fresh: Reading; chat: Reading }>>();
  const upstream = await startUpstream({});
  try {
    for (let round = 0; round < Number(values.rounds); round += 1) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const dir = mkdtempSync(path.join(tmpdir(), 'bench-idle-rss-'));
        const gateway = await startOrClose(
          startOurGateway(upstream, {
            databaseServerUrl,
            redisUrl,
            nodeArgs: [...side.nodeArgs, '--require', hook],
            env: { ...side.env, MEMORY_HOOK_DIR: dir },
            ...(side.script ? { script: side.script } : {}),
          }),
          [upstream],
        );
        try {
          const fresh = await readTree(gateway, dir, Number(values.idle));
          await chatOnce(gateway, fresh.workersMb.length);
          const chat = await readTree(gateway, dir, Number(values.idle));
          readings.set(side.label, [...(readings.get(side.label) ?? []), { fresh, chat }]);
          console.error(
            `round ${round + 1} ${side.label}: fresh workers ${fresh.workersMb.join(', ')} MB (primary ${fresh.primaryMb}; PSS tree ${fresh.treePssMb}), after chat ${chat.workersMb.join(', ')} MB (PSS tree ${chat.treePssMb})`,
          );
        } finally {
          await gateway.close();
        }
      }
    }
  } finally {
    await upstream.close();
  }
  console.log(markdownOf(readings, Boolean(values.modules)));
  return 0;
}

function markdownOf(
  readings: Map<string, Array<{ fresh: Reading; chat: Reading }>>,
  modules: boolean,
): string {
  const lines = [
    '| build | phase | RSS per worker (MB) | before GC (MB) | primary (MB) | tree (MB) | PSS per worker / primary / tree (MB) | heap used / total (MB) | young gen. (MB) | external (MB) |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const [label, runs] of readings) {
    for (const phase of ['fresh', 'chat'] as const) {
      const of = (pick: (r: Reading) => number) =>
        Math.round(median(runs.map((r) => pick(r[phase]))) * 10) / 10;
      /** The median of a PSS reading, or a dash when a round has none (off Linux). */
      const ofPss = (pick: (r: Reading) => number | null) =>
        runs.some((r) => pick(r[phase]) === null) ? '–' : of((r) => pick(r) ?? 0);
      const workerPss = (r: Reading) =>
        r.workersPssMb.some((v) => v === null) ? null : median(r.workersPssMb as number[]);
      lines.push(
        `| ${label} | ${phase === 'fresh' ? 'fresh, idle' : 'after chat, idle'} | ${of((r) => median(r.workersMb))} | ${of((r) => r.beforeGcMb)} | ${of((r) => r.primaryMb ?? 0) || '–'} | ${of((r) => r.treeMb)} | ${ofPss(workerPss)} / ${ofPss((r) => r.primaryPssMb) || '–'} / ${ofPss((r) => r.treePssMb)} | ${of((r) => r.heapUsedMb)} / ${of((r) => r.heapTotalMb)} | ${of((r) => r.newSpaceMb)} | ${of((r) => r.externalMb)} |`,
      );
    }
  }
  lines.push(
    '',
    `Medians of ${[...readings.values()][0]?.length ?? 0} rounds; RSS (VmRSS) and PSS (smaps_rollup \`Pss\`) from /proc after a last-resort GC in each process (before GC: the first worker's RSS as it was after the idle seconds). The RSS sum counts the pages the processes share (the node binary's, ~50 MB each) once per process; PSS splits them among the processes (each build runs from its own copy of the binary, so it shares them only within its tree): the tree's PSS is what it costs the machine.`,
  );
  if (modules)
    for (const [label, runs] of readings)
      for (const phase of ['fresh', 'chat'] as const) {
        const mods = runs[0]?.[phase].modules ?? {};
        const list = Object.entries(mods)
          .sort((a, b) => b[1] - a[1])
          .map(([name, n]) => `${name} ${n}`)
          .join(', ');
        lines.push('', `${label}, ${phase}: modules loaded by package: ${list}`);
      }
  return lines.join('\n');
}

runMain(main);
