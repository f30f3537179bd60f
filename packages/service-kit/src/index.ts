export { EnvError, envFields, loadEnvOrExit, parseEnv } from './env';
export { healthRoutes } from './health';
export { jsonBody, rateLimitHandler } from './json-body';
export { parseRequestPart } from './parse-request-part';
export { type RunServerOptions, runServer } from './server';
export { createServiceApp, type ServiceAppOptions } from './service-app';
