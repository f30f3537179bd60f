import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

/** The options every peer scenario that starts our gateway takes, besides its own. */
const PEER_OPTIONS = {
  'cpu-prof': { type: 'string' },
  'gateway-node-args': { type: 'string', default: '' },
  'variant-node-args': { type: 'string', default: '' },
  'gateway-env': { type: 'string', default: '' },
  'no-record': { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const satisfies ParseArgsOptionsConfig;

type PeerOptionValues = {
  'cpu-prof'?: string;
  'gateway-node-args': string;
  'variant-node-args': string;
  'gateway-env': string;
  'no-record': boolean;
  help: boolean;
};

/**
 * Parses the scenario's own `options` plus --cpu-prof, --gateway-node-args,
 * --variant-node-args (node flags added after --gateway-node-args' for the
 * variant only, where a scenario has one), --gateway-env ("NAME=value ...", added to our gateway's environment, e.g.
 * WORKERS=1), --no-record and --help; --help prints `usage` and exits 0.
 */
export function parsePeerCli<T extends ParseArgsOptionsConfig>(options: T, usage: string) {
  const { values } = parseArgs({ options: { ...options, ...PEER_OPTIONS } });
  const common = values as unknown as PeerOptionValues;
  if (common.help) {
    console.log(usage);
    process.exit(0);
  }
  return {
    values,
    /** Node flags that profile our gateway into --cpu-prof's folder (none without it). */
    cpuProfArgs: common['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${common['cpu-prof']}`] : [],
    gatewayNodeArgs: common['gateway-node-args'].split(' ').filter(Boolean),
    /** The variant's node flags: --gateway-node-args', then --variant-node-args' (the last of a flag wins). */
    variantNodeArgs: [
      ...common['gateway-node-args'].split(' ').filter(Boolean),
      ...common['variant-node-args'].split(' ').filter(Boolean),
    ],
    gatewayEnv: parseEnvPairs(common['gateway-env']),
    record: !common['no-record'],
  };
}

/** "A=1 B=2" -> { A: '1', B: '2' }. */
export function parseEnvPairs(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of text.split(' ').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--gateway-env: expected NAME=value, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/**
 * The Postgres server and Redis the peer scenarios give our gateway:
 * TEST_DATABASE_URL, and BENCH_REDIS_URL or TEST_REDIS_URL; without them the
 * scenario stops with its usage.
 */
export function peerStores(usage: string): { databaseServerUrl: string; redisUrl: string } {
  const databaseServerUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (!databaseServerUrl || !redisUrl) throw new Error(`set TEST_DATABASE_URL and TEST_REDIS_URL\n${usage}`);
  return { databaseServerUrl, redisUrl };
}

/** Whether an environment turns tracing on (the gateway's rule: service-kit `tracingRequested`). */
function tracesWith(env: Record<string, string>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporter);
}

/**
 * What ours and the variant add to their environments, and whether each
 * traces. The variant inherits --gateway-env (then --variant-env), so tracing
 * named there is on for both sides unless --variant-env turns it off
 * (OTEL_SDK_DISABLED=true): session 15's "tracing on ours" runs were on vs on.
 */
export function sidesEnvText(ours: Record<string, string>, variant: Record<string, string>): string {
  const text = (env: Record<string, string>) =>
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || '(nothing)';
  const tracing = (env: Record<string, string>) => (tracesWith(env) ? 'tracing ON' : 'tracing off');
  return `ours adds ${text(ours)} [${tracing(ours)}]\nvariant adds ${text(variant)} [${tracing(variant)}]`;
}
