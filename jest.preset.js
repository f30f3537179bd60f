// Shared Jest setup: TypeScript through swc, workspace packages resolved to their
// source via the "source" export condition, and ESM-only dependencies (jose,
// pglite, the schema engine) transformed to CommonJS so they load in Jest's VM.
module.exports = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['source', 'node', 'node-addons'] },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest'],
    '^.+\\.[cm]js$': ['@swc/jest'],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@electric-sql|jose|@prisma/schema-engine-wasm)/)'],
  testTimeout: 30000,
  reporters: ['default', require.resolve('./scripts/jest-summary-reporter.js')],
};
