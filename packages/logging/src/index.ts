export { currentRequestId, type RequestContext, requestContext } from './context';
export { addAccessLogFields, httpLogger } from './http-log';
export { type CreateLoggerOptions, createLogger, createMemoryDestination, type Logger } from './logger';
export { Counter, createHttpMetrics, Gauge, Histogram, type HttpMetrics, type Registry } from './metrics';
export { isSecretName, REDACTED, redactLine, redactText } from './redact';
export { requestId } from './request-id';
