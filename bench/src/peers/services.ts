import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createApiKey,
  GATEWAY_MIGRATIONS_DIR,
  PrismaClient,
  SERVER_KEYS,
  TEST_LANES,
  upsertUserByEmail,
} from '@platform/gateway/testing';
import { createTestDatabase, freePort, type OpenAIBehaviour, type TestDatabase } from '@platform/testing';
import { stageCmdOf, stageEnvOf } from './dockerfile';
import { forkBenchChild, REPO_ROOT, type ServiceProcess, startNodeService } from './processes';
import type { UpstreamCount, UpstreamInfo } from './upstream-main';

export type Upstream = {
  url: string;
  baseURL: string;
  pid: number;
  /** Requests the fake has served so far. */
  requests(): Promise<number>;
  close(): Promise<void>;
};

/** The OpenAI fake of @platform/testing in its own process. */
export async function startUpstream(behaviour: OpenAIBehaviour): Promise<Upstream> {
  const { info, pid, child, close } = await forkBenchChild<UpstreamInfo>(
    path.join(__dirname, 'upstream-main.ts'),
    [JSON.stringify(behaviour)],
  );
  return {
    ...info,
    pid,
    requests: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as UpstreamCount).requests));
        child.send('count');
      }),
    close,
  };
}

export type OurGateway = ServiceProcess & { apiKey: string; database: TestDatabase };

/**
 * The node flags of the gateway's production image: those of its stage's
 * `CMD ["node", ..., "dist/main.js"]` (`runtime-gateway`), or of the command
 * it inherits from `runtime-common` when it sets none.
 */
export const PRODUCTION_NODE_ARGS = productionNodeArgs();

function productionNodeArgs(): string[] {
  const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const argv = stageCmdOf(dockerfile, 'runtime-gateway') ?? stageCmdOf(dockerfile, 'runtime-common') ?? [];
  if (argv[0] !== 'node' || argv[argv.length - 1] !== 'dist/main.js')
    throw new Error(
      `the gateway image's CMD is not ["node", <flags>, "dist/main.js"]: ${JSON.stringify(argv)}`,
    );
  return argv.slice(1, -1);
}

/**
 * The environment the gateway's image sets besides NODE_ENV, HOST and PORT
 * (which the bench sets itself): the `ENV` lines of the Dockerfile's
 * `runtime-gateway` stage, e.g. MALLOC_ARENA_MAX. Ours gets them under
 * --gateway-env's (which can override them).
 */
export const PRODUCTION_GATEWAY_ENV = productionEnvOf('gateway');

function productionEnvOf(app: string): Record<string, string> {
  const env = stageEnvOf(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'), `runtime-${app}`);
  delete env.PORT;
  return env;
}

/** PRODUCTION_GATEWAY_ENV as `K=V` words, for the reports. */
export const PRODUCTION_GATEWAY_ENV_TEXT = Object.entries(PRODUCTION_GATEWAY_ENV)
  .map(([k, v]) => `${k}=${v}`)
  .join(' ');

/**
 * Starts a built service (`node <script>`) as production runs it: the
 * production node flags (then `nodeArgs`), NODE_ENV=production, LOG_LEVEL
 * info, Postgres and Redis, on a free loopback port, ready on /health.
 */
export async function startProductionService(opts: {
  name: string;
  script: string;
  nodeArgs?: string[];
  databaseUrl: string;
  redisUrl: string;
  env: Record<string, string>;
  wrapper?: string[];
}): Promise<ServiceProcess> {
  const port = await freePort();
  return startNodeService({
    name: opts.name,
    script: opts.script,
    ...(opts.wrapper ? { wrapper: opts.wrapper } : {}),
    nodeArgs: [...PRODUCTION_NODE_ARGS, ...(opts.nodeArgs ?? [])],
    port,
    readyPath: '/health',
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: opts.databaseUrl,
      REDIS_URL: opts.redisUrl,
      ...opts.env,
    },
  });
}

const GATEWAY_DIST = path.join(REPO_ROOT, 'apps', 'gateway', 'dist', 'main.js');

/**
 * The test lanes for an older build that refuses today's at start (another
 * build, --variant-script or --gateway-script, tried with TEST_LANES first):
 * without the media price entries (`per_image`, `per_second`, ...) that
 * builds before them refuse (e.g. 6733dc1). Only chat is measured, and an
 * unpriced media target is what those builds ran with.
 */
function lanesForOtherBuild(): typeof TEST_LANES {
  const tokenPriced = Object.entries(TEST_LANES.prices).filter(([, price]) => 'input' in price);
  return { ...TEST_LANES, prices: Object.fromEntries(tokenPriced) as typeof TEST_LANES.prices };
}

/**
 * Our gateway as production runs it: `node apps/gateway/dist/main.js` with
 * NODE_ENV=production, a fresh migrated Postgres database, Redis, LOG_LEVEL
 * info to stdout (a pipe, read and counted by the bench), and one real API key
 * issued beforehand in that database. Limits and usage recording are on; the
 * rate limit and token budget are set out of reach so they are checked on every
 * request but never answer 429. SMTP_URL points at a closed port (production
 * requires one; no mail is sent).
 */
export async function startOurGateway(
  upstream: Upstream,
  opts: {
    databaseServerUrl: string;
    redisUrl: string;
    nodeArgs?: string[];
    env?: Record<string, string>;
    /** A built entry other than apps/gateway/dist/main.js, e.g. an earlier commit's build. */
    script?: string;
    /** A command node runs under (startNodeService). */
    wrapper?: string[];
  },
): Promise<OurGateway> {
  const database = await createTestDatabase({
    migrationsDir: GATEWAY_MIGRATIONS_DIR,
    serverUrl: opts.databaseServerUrl,
  });
  const databaseUrl = database.url;
  if (!databaseUrl) throw new Error('the peers bench needs Postgres (TEST_DATABASE_URL)');
  const secret = `bench-secret-${randomBytes(16).toString('hex')}`;
  const prisma = new PrismaClient({ adapter: database.adapter });
  const user = await upsertUserByEmail(prisma, `bench-peers-${process.pid}@example.com`);
  const { key } = await createApiKey(
    { prisma, env: { GATEWAY_SECRET: secret } },
    { userId: user.id, name: 'bench', scope: 'ai' },
  );
  await prisma.$disconnect();
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-peers-'));
  const lanesFile = path.join(dir, 'lanes.json');
  const providers = ['openrouter', 'groq', 'cerebras', 'google', 'openai', 'elevenlabs'];
  // `--gateway-env "MALLOC_ARENA_MAX="` (an empty value) removes what the image sets: the run without it.
  const imageEnv = Object.fromEntries(
    Object.entries(PRODUCTION_GATEWAY_ENV).filter(([k]) => opts.env?.[k] !== ''),
  );
  const givenEnv = Object.fromEntries(
    Object.entries(opts.env ?? {}).filter(([k, v]) => !(v === '' && k in PRODUCTION_GATEWAY_ENV)),
  );
  const start = () =>
    startProductionService({
      name: 'ours',
      script: opts.script ?? GATEWAY_DIST,
      nodeArgs: opts.nodeArgs,
      ...(opts.wrapper ? { wrapper: opts.wrapper } : {}),
      databaseUrl,
      redisUrl: opts.redisUrl,
      env: {
        ...imageEnv,
        SMTP_URL: 'smtp://127.0.0.1:9',
        GATEWAY_PUBLIC_URL: 'http://gateway.bench',
        GATEWAY_SECRET: secret,
        AI_LANES_CONFIG: lanesFile,
        AI_PROVIDER_BASE_URLS: providers.map((p) => `${p}=${upstream.baseURL}`).join(','),
        AI_UPSTREAM_TIMEOUT_MS: '30000',
        PROVIDER_KEYS_MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        // Each gateway of a run its own keys (and ledger stream): never another's leftovers.
        REDIS_KEY_PREFIX: `bench-${randomBytes(4).toString('hex')}:`,
        AI_RATE_LIMIT_PER_MINUTE: '1000000000',
        AI_DAILY_TOKEN_BUDGET: '1000000000000000',
        ...SERVER_KEYS,
        ...givenEnv,
      },
    });
  writeFileSync(lanesFile, JSON.stringify(TEST_LANES));
  // The current build given as a script (ab of two configurations of one build) is not another build.
  const otherBuild = opts.script !== undefined && path.resolve(opts.script) !== GATEWAY_DIST;
  let service: ServiceProcess;
  try {
    service = await start();
  } catch (err) {
    // An older build refuses today's media prices at start: it gets the lanes it knew.
    if (!otherBuild || !/lanes config|Unrecognized key/.test((err as Error).message)) throw err;
    writeFileSync(lanesFile, JSON.stringify(lanesForOtherBuild()));
    service = await start();
  }
  return {
    ...service,
    apiKey: key,
    database,
    async close() {
      await service.close();
      await database.drop();
    },
  };
}

const PORTKEY_ENTRY = path.join(
  REPO_ROOT,
  'node_modules',
  '@portkey-ai',
  'gateway',
  'build',
  'start-server.js',
);

/**
 * Portkey's open-source gateway (npm @portkey-ai/gateway) as its README starts
 * it, headless, production. Its streams need the @hono/node-server its own
 * lockfile pins (1.13.5): the root package.json's `overrides` gives it that one
 * (with 1.19.x every stream answers 500, TypeError: immutable; bench/README.md).
 */
export async function startPortkey(): Promise<ServiceProcess> {
  const port = await freePort();
  return startNodeService({
    name: 'portkey',
    script: PORTKEY_ENTRY,
    args: [`--port=${port}`, '--headless'],
    port,
    readyPath: '/',
    env: { NODE_ENV: 'production' },
  });
}

/** The installed @portkey-ai/gateway's version. */
export function portkeyVersion(): string {
  const file = path.join(REPO_ROOT, 'node_modules', '@portkey-ai', 'gateway', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
