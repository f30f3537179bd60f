import path from 'node:path';
import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Express } from 'express';
import { loadLanesConfig } from '../../src/ai/config/lanes';
import { createApp } from '../../src/app';
import type { RawSql } from '../../src/batching/raw-sql';
import {
  buildGatewayDeps,
  closeGatewayDeps,
  type GatewayDeps,
  type GatewayDepsOverrides,
} from '../../src/deps';
import { loadGatewayEnv } from '../../src/env';
import type { PrismaClient } from '../../src/generated/prisma/client';

/** The gateway's migrations, for createTestDatabase. */
export const GATEWAY_MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'prisma', 'migrations');

/** One gateway instance as main.ts wires it, on stores the caller owns. */
export type GatewayInstance = { app: Express; deps: GatewayDeps; close(): Promise<void> };

/**
 * Builds deps and app the way main.ts does (buildGatewayDeps, then createApp)
 * from raw environment variables. `close` closes what the wiring built, not
 * the database or store passed in.
 */
export function startGatewayInstance(
  stores: { logger: Logger; prisma: PrismaClient; sql?: RawSql; kv: KeyValueStore },
  vars: Record<string, string>,
  overrides: GatewayDepsOverrides = {},
): GatewayInstance {
  const env = loadGatewayEnv(vars);
  const lanes = loadLanesConfig(env.AI_LANES_CONFIG, env.AI_ALLOWED_LANES);
  const deps = buildGatewayDeps({ env, lanes, ...stores }, overrides);
  return { app: createApp(deps), deps, close: () => closeGatewayDeps(deps) };
}
