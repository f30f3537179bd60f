export { AppError, type AppErrorOptions, type ErrorDetail, isAppError } from './app-error';
export { ERROR_CODES, type ErrorCode, statusOf } from './codes';
export { EnvError, envFields, loadEnvOrExit, parseEnv } from './env';
export { type ErrorBody, errorHandler, notFoundHandler, sendError, toAppError, zodDetails } from './handler';
export { jsonBody, rateLimitHandler } from './http';
export { isDependencyUnavailable } from './unavailable';
