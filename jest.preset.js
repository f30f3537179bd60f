// Shared Jest setup: TypeScript through swc, workspace packages resolved to their
// source via the "source" export condition, and ESM-only dependencies (jose, openid-client,
// pglite, the schema engine) transformed to CommonJS so they load in Jest's VM, and
// OpenTelemetry's OTLP exporter, whose `import("http")` Jest's VM refuses.
const { availableParallelism } = require('node:os');

module.exports = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['source', 'node', 'node-addons'] },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest'],
    '^.+\\.[cm]js$': ['@swc/jest'],
  },
  // eventsource and eventsource-parser (under the MCP SDK) export their TypeScript source under
  // the `source` condition, with imports Jest cannot resolve: load their CommonJS builds.
  moduleNameMapper: {
    '^eventsource$': require.resolve('eventsource'),
    '^eventsource-parser$': require.resolve('eventsource-parser'),
    '^eventsource-parser/stream$': require.resolve('eventsource-parser/stream'),
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(@electric-sql|jose|openid-client|oauth4webapi|@prisma/schema-engine-wasm|@opentelemetry/otlp-exporter-base)/)',
  ],
  // Per test and hook. Generous on purpose: on a shared 2-core machine under load a
  // harness start (database, migrations, servers) took over 30 s and failed whole
  // files; a hang still fails. Files that need a tighter bound pass their own.
  testTimeout: 90000,
  // Test files run in a worker process that is replaced once it holds more than
  // this after a file. Without it a 2-core machine runs every file in Jest's own
  // process: on a fresh clone (in-memory PGlite databases instead of TEST_*
  // servers) the gateway's files grew that process past 3.3 GB and V8 aborted.
  workerIdleMemoryLimit: '1GB',
  // Two workers even on 2 cores (Jest's default there is one). Most of a file's
  // time is spent waiting on servers, child processes and fakes: with one worker
  // the gateway's suite used 36 % of one core; two cut its wall time by a third
  // (docs/development.md "CI"). Larger machines keep Jest's default (cores - 1).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  reporters: ['default', require.resolve('./scripts/jest-summary-reporter.js')],
};
