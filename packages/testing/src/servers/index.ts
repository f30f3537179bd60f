export { testServerUrls } from './env';
export { describeUnless, describeWith, missingOf, type Need, needsMet, type TestServer } from './need';
export { hasPostgresServer, type NeedPostgresOptions, needPostgres, startPrivatePostgres } from './postgres';
export type { PrivateServer } from './private-server';
export { freePort, onPath } from './process';
export { isStoppableRedis, type NeedRedisOptions, needRedis, startPrivateRedis } from './redis';
export {
  describeWithSharedServers,
  needSharedServers,
  type SharedServers,
  sharedServersMissing,
  startAll,
  startSharedServers,
} from './shared';
export { needChromium, needNginx, needPrometheus } from './tools';
