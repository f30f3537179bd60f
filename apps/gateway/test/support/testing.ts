/**
 * `@platform/gateway/testing`: the gateway's public test harness. Other
 * workspaces (bench, the client's tests, e2e) build and drive a real gateway
 * through this file only, never through the app's src/ or generated paths.
 */
export { createApiKey } from '../../src/api-keys/create-api-key';
export { prismaSql } from '../../src/batching/raw-sql';
export { type GatewayDeps, SERVICE_NAME } from '../../src/deps';
export { type GatewayEnv, loadGatewayEnv, ZGatewayEnv } from '../../src/env';
export { PrismaClient } from '../../src/generated/prisma/client';
export { deleteExpiredRecords, readFeed } from '../../src/usage/feed-repo';
export type { UsageLedger } from '../../src/usage/ledger';
export type { LedgerRecord } from '../../src/usage/record';
export { insertLedgerRecords, summariseUsage } from '../../src/usage/repo';
export { upsertUserByEmail } from '../../src/users/repo';
export * from './ai-harness';
export { GATEWAY_MIGRATIONS_DIR, type GatewayInstance, startGatewayInstance } from './gateway-app';
export { gatewayRouteTable, type RouteEntry, routeTable } from './route-table';
