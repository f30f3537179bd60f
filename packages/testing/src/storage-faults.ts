/// <reference types="jest" />
import {
  type EndpointProbe,
  eventually,
  probeConcurrently,
  reportFaultFigures,
  unexpectedAnswers,
} from './fault-load';
import { missingOf, type Need, needPostgres, needRedis, type PrivateServer, startAll } from './servers';

/** A private Redis and Postgres that one fault test file owns (see servers/private-server.ts). */
export type PrivateStorage = {
  redis: PrivateServer;
  postgres: PrivateServer;
  /** Connection settings for a harness: Redis URL and Postgres server URL. */
  urls: { redisUrl: string; databaseServerUrl: string };
  /** Starts both again (so `closeApp` can close cleanly), runs it, then removes both servers. */
  close(closeApp: () => Promise<void>): Promise<void>;
};

/**
 * A private Redis and Postgres for a fault test, even when TEST_* servers are
 * set (it stops them): use in a block from describeWith(needPrivateStorage()),
 * which skips in one line where redis-server or initdb is missing.
 */
export function needPrivateStorage(): Need<PrivateStorage> {
  const needs = [needRedis({ private: true }), needPostgres({ private: true })];
  return {
    kind: '',
    missing: missingOf(needs),
    async start() {
      const [redis, postgres] = (await startAll(needs)) as [PrivateServer, PrivateServer];
      return privateStorageOf(redis, postgres);
    },
  };
}

/** needPrivateStorage().start(); use it inside a block from describeWith(needPrivateStorage()). */
export function startPrivateStorage(): Promise<PrivateStorage> {
  return needPrivateStorage().start();
}

function privateStorageOf(redis: PrivateServer, postgres: PrivateServer): PrivateStorage {
  return {
    redis,
    postgres,
    urls: { redisUrl: redis.url, databaseServerUrl: postgres.url },
    async close(closeApp) {
      try {
        await Promise.all([redis.start(), postgres.start()]);
        await closeApp();
      } finally {
        await Promise.all([redis.close(), postgres.close()]);
      }
    },
  };
}

export type StorageKind = 'Redis' | 'Postgres';

/** One service under a storage outage, as a fault test sees it once its app listens. */
export type StorageOutage = {
  /** Names the service in the FAULT_REPORT figures. */
  service: string;
  storage: PrivateStorage;
  /** Base URL of the app, listening. */
  url: string;
  probes: EndpointProbe[];
  /** docs/reliability.md: the statuses each probe may answer with that server down. */
  expected: Record<StorageKind, Record<string, number[]>>;
  /** Probes that answer errors as HTML pages, not the JSON error contract. */
  htmlPages?: string[];
  /** True once the service serves its ordinary calls again. */
  recovered(): Promise<boolean>;
};

/**
 * Stops `kind`, then: readiness is 503 naming the server that is down; every
 * probe (3 rounds at once) answers within 2 s with a documented status and the
 * error contract, never 500, a 503 being `{error: 'service unavailable',
 * request_id}`; after the server starts again the same app recovers without a
 * restart and is ready.
 */
export async function expectStorageOutageAnswered(kind: StorageKind, o: StorageOutage): Promise<void> {
  const server = kind === 'Redis' ? o.storage.redis : o.storage.postgres;
  const readiness = async () => {
    const res = await fetch(`${o.url}/health/ready`);
    return { status: res.status, body: await res.json() };
  };
  await server.stop();
  expect(await readiness()).toMatchObject({
    status: 503,
    body: {
      error: 'service unavailable',
      status: 'not_ready',
      checks: {
        database: kind === 'Postgres' ? 'down' : 'up',
        key_value_store: kind === 'Redis' ? 'down' : 'up',
      },
    },
  });
  const answers = await probeConcurrently(o.probes, 3);
  expect(unexpectedAnswers(answers, o.expected[kind], o.htmlPages)).toEqual([]);
  expect(answers.find((a) => a.status === 503 && a.name !== 'GET /health/ready')?.body).toEqual({
    error: 'service unavailable',
    code: 'service_unavailable',
    request_id: expect.any(String),
  });
  await server.start();
  const restarted = Date.now();
  expect(await eventually(o.recovered)).toBe(true);
  reportFaultFigures(`${o.service} with ${kind} down`, answers, Date.now() - restarted);
  expect((await readiness()).status).toBe(200);
}
