import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PAYMENT_MIGRATIONS_DIR, PrismaClient } from '@platform/payment/testing';
import { createTestDatabase, startStripeFake } from '@platform/testing';
import { runMain } from '../cli';
import { runLoad } from '../load/run-load';
import { describeMachine, readGitInfo } from '../report/machine';
import { benchPaymentEnv, seedActiveSubscription } from '../targets/payment';
import { parseEnvPairs } from './cli';
import { cpuMsOf, memoryMbOf, REPO_ROOT, startOrClose } from './processes';
import { median, roundTo } from './record';
import { startProductionService } from './services';

const USAGE = `Usage: npm run payment-prod -w @platform/bench -- [options]
  The payment service as production runs it (built apps/payment/dist/main.js,
  NODE_ENV=production, Postgres, Redis, info logs to a pipe) in its own process;
  autocannon in a child process against GET /health and
  GET /api/v1/subscriptions/{user}/{product} (a stored, fresh snapshot: one
  Postgres query per read). Prints a markdown table; nothing is recorded.
  --connections <n>  loaded connections (default 32)
  --rounds <n>       rounds (default 3), medians
  --duration <s>     seconds per run (default 4, after 1 s warm-up)
  --cpu-prof <dir>   run payment under node --cpu-prof
  --variant-env "NAME=value ..."  also run a second payment process with these added to its
                     environment (e.g. WORKERS=1), alternating with the default one
  --variant-script <path>  run the second process from this built entry instead (e.g. an
                     earlier commit's dist copied to apps/payment/dist-before/main.js):
                     two builds in the same alternating rounds
Needs TEST_DATABASE_URL and TEST_REDIS_URL (or BENCH_REDIS_URL) and a built apps/payment/dist.`;

const PAYMENT_DIST = path.join(REPO_ROOT, 'apps', 'payment', 'dist', 'main.js');
const API_KEY = `bench-payment-${randomBytes(8).toString('hex')}`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '4' },
      'cpu-prof': { type: 'string' },
      'variant-env': { type: 'string', default: '' },
      'variant-script': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const databaseServerUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (!databaseServerUrl || !redisUrl) {
    console.error(USAGE);
    return 2;
  }
  const connections = Number(values.connections);
  const rounds = Number(values.rounds);
  const durationSec = Number(values.duration);
  const loadStart = os.loadavg()[0] ?? 0;

  const stripe = await startStripeFake();
  const database = await createTestDatabase({
    migrationsDir: PAYMENT_MIGRATIONS_DIR,
    serverUrl: databaseServerUrl,
  });
  if (!database.url) throw new Error('payment-prod needs Postgres (TEST_DATABASE_URL)');
  const prisma = new PrismaClient({ adapter: database.adapter });
  const { userId, product } = await seedActiveSubscription(stripe, prisma);
  await prisma.$disconnect();

  const variantEnv = parseEnvPairs(values['variant-env']);
  const variantScript = values['variant-script'] ? path.resolve(values['variant-script']) : null;
  const variantLabel = [
    variantScript ? path.relative(REPO_ROOT, variantScript) : '',
    ...Object.entries(variantEnv).map(([k, v]) => `${k}=${v}`),
  ]
    .filter(Boolean)
    .join(' ');
  const start = (extraEnv: Record<string, string>, script = PAYMENT_DIST) =>
    startProductionService({
      name: 'payment',
      script,
      nodeArgs: values['cpu-prof']
        ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`]
        : [],
      databaseUrl: database.url as string,
      redisUrl,
      env: {
        PAYMENT_MS_API_KEY: API_KEY,
        ...benchPaymentEnv(stripe.url),
        ...extraEnv,
      },
    });
  const service = await start({});
  const services = [{ label: 'payment', service }];
  if (variantLabel)
    services.push({
      label: `payment with ${variantLabel}`,
      service: await startOrClose(start(variantEnv, variantScript ?? PAYMENT_DIST), [service]),
    });
  try {
    const statusPath = `/api/v1/subscriptions/${userId}/${product.id}`;
    const first = await fetch(`${service.url}${statusPath}`, { headers: { 'x-api-key': API_KEY } });
    const firstBody = await first.text();
    if (first.status !== 200 || !firstBody.includes('"status":"active"'))
      throw new Error(`priming the snapshot failed: ${first.status} ${firstBody.slice(0, 300)}`);
    const stripeCallsAfterPrime = stripe.requests.length;
    const scenarios: { name: string; url: string; headers: Record<string, string>; pid: number }[] = [];
    for (const what of ['GET /health', 'subscription-status'] as const)
      for (const { label, service: svc } of services)
        scenarios.push({
          name: `${label} ${what}`,
          url: `${svc.url}${what === 'GET /health' ? '/health' : statusPath}`,
          headers: what === 'GET /health' ? {} : { 'x-api-key': API_KEY },
          pid: svc.pid,
        });
    const rows: string[] = [];
    const runs: Record<string, { rps: number[]; p50: number[]; p99: number[]; cpu: number[]; bad: number }> =
      {};
    for (let round = 1; round <= rounds; round += 1) {
      // Alternate which configuration goes first.
      const order = round % 2 === 1 ? scenarios : [...scenarios].reverse();
      for (const s of order) {
        let cpuStart = 0;
        const result = await runLoad(
          {
            url: s.url,
            method: 'GET',
            headers: s.headers,
            connections,
            warmupSec: 1,
            durationSec,
            timeoutSec: 10,
          },
          'child',
          () => {
            cpuStart = cpuMsOf(s.pid);
          },
        );
        const cpu = cpuMsOf(s.pid) - cpuStart;
        const r = runs[s.name] ?? { rps: [], p50: [], p99: [], cpu: [], bad: 0 };
        r.rps.push(result.requestsPerSec);
        r.p50.push(result.latencyMs.p50);
        r.p99.push(result.latencyMs.p99);
        r.cpu.push(result.requests > 0 ? cpu / result.requests : 0);
        r.bad += result.non2xx + result.errors;
        runs[s.name] = r;
        console.log(
          `${s.name} round ${round}: ${result.requestsPerSec} req/s, p99 ${result.latencyMs.p99} ms`,
        );
      }
    }
    for (const name of scenarios.map((sc) => sc.name)) {
      const r = runs[name];
      if (!r) continue;
      rows.push(
        `| ${name} | ${Math.round(median(r.rps))} | ${median(r.p50)} | ${median(r.p99)} | ${roundTo(median(r.cpu), 3)} | ${r.bad} |`,
      );
    }
    const machine = describeMachine({ loadAtStart: loadStart, postgresVersion: null, redisReal: true });
    const git = readGitInfo();
    console.log(
      [
        `## Payment as production runs it: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${git.sha}`,
        '',
        `Node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores; load average ${roundTo(loadStart, 2)} -> ${roundTo(os.loadavg()[0] ?? 0, 2)}. \`apps/payment/dist/main.js\`, \`NODE_ENV=production\`, Postgres, Redis, info logs to a pipe; autocannon in a child process, ${connections} connections, ${rounds} rounds of 1 s warm-up + ${durationSec} s, medians. Stripe calls during the measured reads: ${stripe.requests.length - stripeCallsAfterPrime}. Peak RSS ${services.map(({ label, service: svc }) => `${label} ${memoryMbOf(svc.pid).peak} MB`).join(', ')}.`,
        '',
        '| request | req/s | p50 ms | p99 ms | CPU ms/req | non-2xx + errors |',
        '|---|--:|--:|--:|--:|--:|',
        ...rows,
      ].join('\n'),
    );
    return 0;
  } finally {
    for (const { service: svc } of services) await svc.close();
    await database.drop();
    await stripe.close();
  }
}

runMain(main);
