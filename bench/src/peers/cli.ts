import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

/** The options every peer scenario that starts our gateway takes, besides its own. */
const PEER_OPTIONS = {
  'cpu-prof': { type: 'string' },
  'gateway-node-args': { type: 'string', default: '' },
  'no-record': { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const satisfies ParseArgsOptionsConfig;

type PeerOptionValues = {
  'cpu-prof'?: string;
  'gateway-node-args': string;
  'no-record': boolean;
  help: boolean;
};

/**
 * Parses the scenario's own `options` plus --cpu-prof, --gateway-node-args,
 * --no-record and --help; --help prints `usage` and exits 0.
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
    cpuProfDir: common['cpu-prof'],
    gatewayNodeArgs: common['gateway-node-args'].split(' ').filter(Boolean),
    record: !common['no-record'],
  };
}
