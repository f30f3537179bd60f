import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runMain } from '../cli';
import { parseEnvPairs, parsePeerCli, peerStores } from './cli';
import { startOrClose } from './processes';
import { median } from './record';
import { type OurGateway, startOurGateway, startUpstream } from './services';

const USAGE = `Usage: npm run instructions -w @platform/bench -- --config NAME="A=1 B=2" [--config ...] [options]
  Machine instructions per request of our gateway, counted by valgrind's
  callgrind: each configuration is started under callgrind (WORKERS=1,
  production, Postgres, Redis, the OpenAI fake), warmed up, its counters
  zeroed, then exactly --requests chats are sent and the counters dumped.
  Every thread of the process counts (V8's compiler and GC threads too), and
  neither the host's load nor the other processes change the count, so a
  difference of a few per cent is a difference in work, not in contention.
  (The count is not time: a cache miss costs one instruction here.)
  --config NAME="A=1 ..."  a configuration: a name and the env added to ours (repeat)
  --script <path>    ours from this entry instead of apps/gateway/dist/main.js
  --requests <n>     measured requests per run (default 2000)
  --warmup <n>       requests before the counters are zeroed (default 3000)
  --connections <n>  requests in flight (default 4)
  --repeat <n>       runs per configuration, alternating (default 2)
  --gateway-node-args, --gateway-env: as for peers (every configuration)
Needs valgrind, TEST_DATABASE_URL and TEST_REDIS_URL and a built apps/gateway/dist.`;

/** Sends `count` chats, `connections` at a time; throws on an answer other than 200. */
async function send(g: OurGateway, count: number, connections: number): Promise<void> {
  let next = 0;
  const body = JSON.stringify({
    lane: 'free',
    project_id: 'bench',
    messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
  });
  const one = async () => {
    while (next < count) {
      next += 1;
      const res = await fetch(`${g.url}/api/v1/ai/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': g.apiKey },
        body,
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${res.status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, one));
}

/**
 * Runs callgrind_control on `pid`. vgdb finds the process by a file named
 * after LOGNAME/USER and HOST, read from its own environment: the service's
 * has no user and HOST=127.0.0.1 (startProductionService), so the same here.
 */
function control(pid: number, action: '--zero' | '--dump'): void {
  const out = execFileSync('callgrind_control', [action, String(pid)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1' },
  });
  if (!out.includes('OK')) throw new Error(`callgrind_control ${action} ${pid}: ${out}`);
}

/** The `totals:` (or `summary:`) Ir of a callgrind dump. */
function irOf(file: string): number {
  const text = readFileSync(file, 'utf8');
  const line = /^(?:totals|summary): (\d+)/m.exec(text);
  if (!line) throw new Error(`${file}: no totals line`);
  return Number(line[1]);
}

async function main(): Promise<number> {
  const { values, gatewayNodeArgs, gatewayEnv } = parsePeerCli(
    {
      config: { type: 'string', multiple: true, default: [] },
      script: { type: 'string' },
      requests: { type: 'string', default: '2000' },
      warmup: { type: 'string', default: '3000' },
      connections: { type: 'string', default: '4' },
      repeat: { type: 'string', default: '2' },
    },
    USAGE,
  );
  const configs = (values.config as string[]).map((c) => {
    const eq = c.indexOf('=');
    if (eq < 1) throw new Error(`--config NAME="A=1 ...": got ${c}\n${USAGE}`);
    return { name: c.slice(0, eq), env: parseEnvPairs(c.slice(eq + 1)) };
  });
  if (configs.length === 0) throw new Error(`at least one --config\n${USAGE}`);
  const requests = Number(values.requests);
  const { databaseServerUrl, redisUrl } = peerStores(USAGE);
  const upstream = await startUpstream({});
  const counts: Record<string, number[]> = Object.fromEntries(configs.map((c) => [c.name, []]));
  try {
    for (let round = 1; round <= Number(values.repeat); round += 1) {
      const order = round % 2 === 1 ? configs : [...configs].reverse();
      for (const config of order) {
        const dir = mkdtempSync(path.join(tmpdir(), 'bench-callgrind-'));
        const gateway = await startOrClose(
          startOurGateway(upstream, {
            databaseServerUrl,
            redisUrl,
            nodeArgs: gatewayNodeArgs,
            // Under callgrind everything runs ~50x slower: the product's 750 ms Redis bound would answer 503.
            env: {
              REDIS_COMMAND_TIMEOUT_MS: '60000',
              DATABASE_CONNECT_TIMEOUT_MS: '60000',
              ...gatewayEnv,
              WORKERS: '1',
              ...config.env,
            },
            ...(values.script ? { script: path.resolve(values.script) } : {}),
            wrapper: ['valgrind', '--tool=callgrind', `--callgrind-out-file=${dir}/cg.%p`],
          }),
          [],
        );
        try {
          await send(gateway, Number(values.warmup), Number(values.connections));
          control(gateway.pid, '--zero');
          await send(gateway, requests, Number(values.connections));
          control(gateway.pid, '--dump');
        } finally {
          await gateway.close();
        }
        // callgrind_control --dump writes cg.<pid>.1; the exit writes cg.<pid> (shutdown, not counted).
        const dump = readdirSync(dir).find((f) => /^cg\.\d+\.1$/.test(f));
        if (!dump) throw new Error(`${dir}: no dump`);
        const perRequest = irOf(path.join(dir, dump)) / requests;
        counts[config.name]?.push(perRequest);
        console.log(
          `round ${round} ${config.name}: ${Math.round(perRequest).toLocaleString('en')} instructions/request (${dir}/${dump})`,
        );
      }
    }
  } finally {
    await upstream.close();
  }
  const base = configs[0] as { name: string };
  const baseMedian = median(counts[base.name] ?? []);
  console.log(
    `\n| configuration | instructions per request (median) | vs ${base.name} |\n| --- | --: | --: |`,
  );
  for (const c of configs) {
    const m = median(counts[c.name] ?? []);
    console.log(`| ${c.name} | ${Math.round(m).toLocaleString('en')} | ${(m / baseMedian).toFixed(3)}x |`);
  }
  return 0;
}

runMain(main);
