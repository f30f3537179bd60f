/**
 * The shared servers a run was given: TEST_DATABASE_URL (a Postgres server URL;
 * tests create databases named t_<random> on it) and TEST_REDIS_URL (tests write
 * under unique key prefixes). The only place tests read them: without them,
 * tests run on embedded PGlite and in-process stores, and a test that needs a
 * real server starts a private one (needPostgres, needRedis).
 */
export function testServerUrls(): { databaseUrl?: string; redisUrl?: string } {
  return {
    databaseUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  };
}
