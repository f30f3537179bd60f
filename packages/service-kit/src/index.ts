export { type Clock, systemClock } from './clock';
export { cgroupCpuLimit, usableCpus } from './cpu-limit';
export {
  databasePoolMax,
  EnvError,
  envFields,
  loadEnvOrExit,
  parseEnv,
  serviceEnvFields,
  storageTimeouts,
} from './env';
export { createHealthRouter, type ReadinessCheck, storageReadiness } from './health';
export { heapSurgeSettings } from './heap-surge';
export { escapeHtml } from './html';
export { jsonBody } from './json-body';
export { metricsAccess } from './metrics-access';
export { parseRequestPart } from './parse-request-part';
export {
  checkLimit,
  consumeLimit,
  countHit,
  type Limit,
  rateLimited,
  type WindowCounter,
  windowKey,
} from './rate-limit';
export { createWindowLimit } from './rate-limit-middleware';
export { runCommand } from './run-command';
export { sendJson } from './send-json';
export {
  createGracefulShutdown,
  DRAIN_DEADLINE_EVENT,
  DRAIN_RETRY_AFTER_SECONDS,
  type GracefulShutdownOptions,
  type RunServerOptions,
  runServer,
} from './server';
export { createServiceApp, type ServiceAppOptions } from './service-app';
export { startService } from './start-service';
export {
  activeSpan,
  annotateRequest,
  annotateSpan,
  endSpan,
  inSpan,
  otelVariablesOf,
  requestEvent,
  requestSpan,
  startSpan,
  startTracing,
  type TraceSpan,
  type Tracing,
  traced,
  tracingCapturesContent,
  tracingOn,
  tracingRequested,
  withTraceHeaders,
} from './tracing';
export { DEFAULT_CONNECTION_BUDGET, databasePoolSize, servingProcesses } from './workers';
