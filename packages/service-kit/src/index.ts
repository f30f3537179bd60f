export { EnvError, envFields, loadEnvOrExit, parseEnv } from './env';
export { createHealthRouter, type ReadinessCheck, storageReadiness } from './health';
export { escapeHtml } from './html';
export { jsonBody } from './json-body';
export { parseRequestPart } from './parse-request-part';
export {
  checkLimit,
  consumeLimit,
  countHit,
  type Limit,
  rateLimited,
  type WindowCounter,
} from './rate-limit';
export { createWindowLimit } from './rate-limit-middleware';
export { sendJson } from './send-json';
export {
  createGracefulShutdown,
  DRAIN_DEADLINE_EVENT,
  type GracefulShutdownOptions,
  type RunServerOptions,
  runServer,
} from './server';
export { createServiceApp, type ServiceAppOptions } from './service-app';
export { startService } from './start-service';
