import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Installs the built package into a directory outside the workspace the way npm
 * would: @platform packages are compiled from their tsconfig.build.json into the
 * consumer's node_modules (nothing in the workspace is written), and their
 * declared dependencies and peer dependencies are linked from the workspace's
 * node_modules. Then plain `node` and `tsc` processes use it as ESM and CommonJS.
 */
const ROOT = path.resolve(__dirname, '../../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

let consumer: string;

/** Runs a node script; a failure carries the script's output, e.g. tsc's error list. */
function run(file: string, args: string[], cwd: string): string {
  try {
    return execFileSync(process.execPath, [file, ...args], { cwd, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(file)} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

type PackageJson = {
  main: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

function install(name: string, done: Set<string>): void {
  if (done.has(name)) return;
  done.add(name);
  const source = fs.realpathSync(path.join(ROOT, 'node_modules', name));
  const target = path.join(consumer, 'node_modules', name);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (!name.startsWith('@platform/')) {
    fs.symlinkSync(source, target, 'dir');
    return;
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')) as PackageJson;
  // Optional peers (express for @platform/errors' middleware) are left out on purpose:
  // a client consumer must not need them.
  const peers = Object.keys(pkg.peerDependencies ?? {}).filter(
    (d) => !pkg.peerDependenciesMeta?.[d]?.optional,
  );
  for (const dep of [...Object.keys(pkg.dependencies ?? {}), ...peers]) install(dep, done);
  fs.mkdirSync(target, { recursive: true });
  fs.copyFileSync(path.join(source, 'package.json'), path.join(target, 'package.json'));
  const outDir = path.join(target, path.dirname(pkg.main));
  run(TSC, ['-p', path.join(source, 'tsconfig.build.json'), '--outDir', outDir], source);
  if (name === '@platform/client') {
    run(path.join(source, 'scripts/write-esm-wrapper.cjs'), [path.join(target, 'dist')], target);
  }
}

function write(file: string, lines: string[]): void {
  fs.writeFileSync(path.join(consumer, file), lines.join('\n'));
}

/** A consumer script's last line of output, parsed. */
function runConsumer(file: string): Record<string, unknown> {
  const out = run(file, [], consumer).trim().split('\n');
  return JSON.parse(out[out.length - 1]!) as Record<string, unknown>;
}

beforeAll(() => {
  consumer = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-client-consumer-'));
  fs.writeFileSync(path.join(consumer, 'package.json'), '{ "name": "outside-consumer", "private": true }\n');
  install('@platform/client', new Set());
  install('@types/node', new Set());
}, 180_000);

afterAll(() => {
  if (consumer) fs.rmSync(consumer, { recursive: true, force: true });
});

// A refused connection (port 1) gives a NetworkError without waiting: it proves that
// the whole runtime chain (client, contract, zod) loads and works outside the repo.
const PROBE = [
  "const client = api.createPaymentClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', retry: false });",
  'const error = await client.health().catch((e) => e);',
];

describe('an outside package', () => {
  it('requires it as CommonJS', () => {
    write('consumer.cjs', [
      "const api = require('@platform/client');",
      '(async () => {',
      ...PROBE,
      'console.log(JSON.stringify({',
      "  resolved: require.resolve('@platform/client'),",
      '  createPaymentClient: typeof api.createPaymentClient,',
      '  createGatewayClient: typeof api.createGatewayClient,',
      '  networkError: error instanceof api.NetworkError,',
      '}));',
      '})();',
    ]);
    const result = runConsumer('consumer.cjs');
    expect(result).toEqual({
      resolved: path.join(fs.realpathSync(consumer), 'node_modules/@platform/client/dist/cjs/index.js'),
      createPaymentClient: 'function',
      createGatewayClient: 'function',
      networkError: true,
    });
  });

  it('imports it as ESM, sharing the classes of the CommonJS build', () => {
    write('consumer.mjs', [
      "import { createRequire } from 'node:module';",
      "import * as api from '@platform/client';",
      "import { createGatewayClient } from '@platform/client';",
      "const cjs = createRequire(import.meta.url)('@platform/client');",
      ...PROBE,
      'console.log(JSON.stringify({',
      "  resolved: import.meta.resolve('@platform/client'),",
      '  createPaymentClient: typeof api.createPaymentClient,',
      '  createGatewayClient: typeof createGatewayClient,',
      '  networkError: error instanceof api.NetworkError,',
      '  sameClasses: api.PlatformApiError === cjs.PlatformApiError,',
      '  sameExports: Object.keys(cjs).filter((k) => k !== "__esModule").sort().join() ===',
      '    Object.keys(api).filter((k) => k !== "default").sort().join(),',
      '}));',
    ]);
    const result = runConsumer('consumer.mjs');
    expect(result).toMatchObject({
      createPaymentClient: 'function',
      createGatewayClient: 'function',
      networkError: true,
      sameClasses: true,
      sameExports: true,
    });
    expect(result.resolved).toMatch(/\/node_modules\/@platform\/client\/dist\/esm\/index\.mjs$/);
  });

  it('type-checks against the shipped declarations from ESM and CommonJS', () => {
    const body = [
      "const gateway = createGatewayClient({ baseUrl: 'http://gateway.localhost:8080', apiKey: 'k' });",
      "const reply: Promise<{ content: string; model_used: string }> = gateway.chat({ lane: 'free', project_id: 'p', messages: [{ role: 'user', content: 'hi' }] });",
      '// @ts-expect-error: the request is typed from the contract, so a wrong field is an error',
      "void gateway.chat({ lane: 'free', project_id: 'p', messages: [{ role: 'robot', content: 'hi' }] });",
      'export const checks = [reply, PlatformApiError];',
    ];
    write('types-esm.mts', [
      "import { createGatewayClient, PlatformApiError } from '@platform/client';",
      ...body,
    ]);
    write('types-cjs.cts', [
      "import { createGatewayClient, PlatformApiError } from '@platform/client';",
      ...body,
    ]);
    write('tsconfig.json', [
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: ['node'],
        },
        files: ['types-esm.mts', 'types-cjs.cts'],
      }),
    ]);
    expect(run(TSC, ['-p', 'tsconfig.json'], consumer)).toBe('');
  }, 120_000);
});
