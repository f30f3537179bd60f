import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createTestKv } from '@platform/testing';
import type { PrismaClient } from '../src/generated/prisma/client';
import { SECRET, TEST_LANES, writeTempJson } from './support/ai-harness';
import { startGatewayInstance } from './support/gateway-app';

/** TEST_LANES with the free lane's second target replaced. */
function lanesWithFreeTarget(provider: string, model: string) {
  const lanes = structuredClone(TEST_LANES);
  lanes.lanes.free.targets[1] = { provider, model };
  return lanes;
}

function buildApp(lanesFile: string) {
  // In memory: no query or Redis command runs while the app is built, so no
  // store is needed to see it refuse. (A Redis one left its key sweep queued
  // behind the connect while the last test blocked the loop in spawnSync; on a
  // busy host the sweep's 5 s time-out then failed whichever file ran next.)
  const kv = createTestKv({ url: '' });
  try {
    return startGatewayInstance(
      {
        logger: createLogger({ service: 'gateway', destination: createMemoryDestination() }),
        prisma: {} as PrismaClient,
        kv,
      },
      { NODE_ENV: 'test', GATEWAY_SECRET: SECRET, AI_LANES_CONFIG: lanesFile },
    );
  } finally {
    void kv.close();
  }
}

describe('lanes config at start', () => {
  it.each([
    ['openrouter', 'openrouter/auto'],
    ['openrouter', 'openrouter/free'],
  ])('a free lane with the router model %s/%s is refused', (provider, model) => {
    const file = writeTempJson('lanes.json', lanesWithFreeTarget(provider, model));
    expect(() => buildApp(file)).toThrow(`router model ${model} picks arbitrary models`);
  });

  it('a free lane with four targets is refused', () => {
    const lanes = structuredClone(TEST_LANES);
    lanes.lanes.free.targets.push({ provider: 'openai', model: 'free-d' });
    expect(() => buildApp(writeTempJson('lanes.json', lanes))).toThrow('exactly 3 verified free targets');
  });

  it('an unreadable file is refused', () => {
    expect(() => buildApp('/nonexistent/lanes.json')).toThrow(
      'invalid lanes config (/nonexistent/lanes.json)',
    );
  });

  it('the service process exits 1 with the reason when the free lane holds a router model', () => {
    const file = writeTempJson('lanes.json', lanesWithFreeTarget('openrouter', 'openrouter/auto'));
    const tsx = path.join(require.resolve('tsx/package.json'), '..', 'dist', 'cli.mjs');
    const result = spawnSync(
      process.execPath,
      [tsx, '--conditions=source', path.join(__dirname, '..', 'src', 'main.ts')],
      {
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          GATEWAY_SECRET: SECRET,
          AI_LANES_CONFIG: file,
        },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('gateway: failed to start: invalid lanes config');
    expect(result.stderr).toContain('router model openrouter/auto picks arbitrary models');
  });
});
