import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMemoryStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import type { Express } from 'express';
import { type AdmissionKind, admissionKindOf } from '../../src/admission/guards';
import type { PrismaClient } from '../../src/generated/prisma/client';
import { TEST_LANES } from './ai-harness';
import { startGatewayInstance } from './gateway-app';

/** One route of an app: its method, its path as mounted, and the admission guard before its handler. */
export type RouteEntry = { method: string; path: string; admission: AdmissionKind | undefined };

type Layer = {
  handle: unknown;
  route?: { path: string | string[]; methods: Record<string, boolean | undefined>; stack: Layer[] };
};

/**
 * Every route of an Express app, walked from its router stack (sub-routers
 * included): for each, the admission kind of the first admission guard that
 * runs before its handler, whether a guard of the route or a middleware of a
 * router around it.
 */
export function routeTable(app: Express): RouteEntry[] {
  const root = (app as unknown as { router: { stack: Layer[] } }).router;
  const walk = (stack: readonly Layer[], around: AdmissionKind | undefined): RouteEntry[] => {
    let before = around;
    return stack.flatMap((layer) => {
      if (layer.route) {
        const own = layer.route.stack.map((l) => admissionKindOf(l.handle)).find((k) => k !== undefined);
        const { methods, path: paths } = layer.route;
        const admission = before ?? own;
        return Object.keys(methods)
          .filter((m) => m !== '_all' && methods[m])
          .flatMap((m) => [paths].flat().map((p) => ({ method: m.toUpperCase(), path: p, admission })));
      }
      const inner = (layer.handle as { stack?: Layer[] }).stack;
      if (inner) return walk(inner, before);
      before ??= admissionKindOf(layer.handle);
      return [];
    });
  };
  return walk(root.stack, undefined);
}

/**
 * The gateway as main.ts wires it, on a memory store and a database that
 * refuses any use: for reading its route table, never for serving.
 */
export async function gatewayRouteTable(): Promise<RouteEntry[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-routes-'));
  const lanes = path.join(dir, 'lanes.json');
  writeFileSync(lanes, JSON.stringify(TEST_LANES));
  const refuse = () => {
    throw new Error('the route table is read without a database');
  };
  const prisma = new Proxy({}, { get: refuse }) as unknown as PrismaClient;
  const instance = startGatewayInstance(
    {
      logger: createLogger({ service: 'gateway', destination: createMemoryDestination(), level: 'fatal' }),
      prisma,
      kv: createMemoryStore(),
    },
    {
      NODE_ENV: 'test',
      GATEWAY_PUBLIC_URL: 'http://gateway.test',
      GATEWAY_SECRET: 'route-table-secret-0123456789abcdef',
      AI_LANES_CONFIG: lanes,
      DATA_DIR: dir,
      RESPONSES_RETENTION_DAYS: '1',
    },
  );
  try {
    return routeTable(instance.app);
  } finally {
    await instance.close();
  }
}
