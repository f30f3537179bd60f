import { describeWith, missingOf, type Need, type TestServer } from './need';
import { needPostgres } from './postgres';
import { needRedis } from './redis';

/**
 * Postgres and Redis for a test that needs real servers (several processes on
 * one database and one Redis): the TEST_* ones when set (CI), else private
 * ones started for the test file (needPostgres, needRedis).
 */
export type SharedServers = {
  /** A server URL: tests create their own databases on it. */
  databaseUrl: string;
  redisUrl: string;
  /** Stops what was started privately; leaves TEST_* servers alone. */
  close(): Promise<void>;
};

/** Starts every need at once; if one fails, closes the others and rethrows. */
export async function startAll<T extends TestServer>(needs: readonly Need<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(needs.map((need) => need.start()));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) {
    await Promise.allSettled(started.map((server) => server.close()));
    throw failure.reason;
  }
  return started;
}

/** Postgres and Redis as one need: see SharedServers. */
export function needSharedServers(): Need<SharedServers> {
  const needs = [needPostgres(), needRedis()];
  return {
    kind: '',
    missing: missingOf(needs),
    async start() {
      const [postgres, redis] = (await startAll(needs)) as [TestServer, TestServer];
      return {
        databaseUrl: postgres.url,
        redisUrl: redis.url,
        close: async () => {
          await Promise.all([postgres.close(), redis.close()]);
        },
      };
    },
  };
}

/**
 * Why a test needing Postgres and Redis cannot run here, or undefined when it
 * can (TEST_* set, or the server binaries installed).
 */
export function sharedServersMissing(): string | undefined {
  const missing = missingOf([needPostgres(), needRedis()]);
  return missing && `needs ${missing}`;
}

/** describeWith(what, needPostgres(), needRedis()). */
export function describeWithSharedServers(what: string): jest.Describe {
  return describeWith(what, needPostgres(), needRedis());
}

/** needSharedServers().start(): TEST_DATABASE_URL/TEST_REDIS_URL, or private servers on free ports. */
export function startSharedServers(): Promise<SharedServers> {
  return needSharedServers().start();
}
