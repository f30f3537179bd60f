export { AppError, type AppErrorOptions, type ErrorDetail, isAppError } from './app-error';
export { ERROR_CODES, type ErrorCode, statusOf } from './codes';
export { type ErrorBody, errorHandler, notFoundHandler, toAppError, zodDetails } from './handler';
export { isDependencyUnavailable } from './unavailable';
