import type { AnthropicErrorBody } from '@platform/contract';
import { type AppError, errorHandler } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { ErrorRequestHandler } from 'express';

/** Anthropic's error `type` for a status, which its SDKs and Claude Code branch on. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * One of our errors in Anthropic's envelope. The message is our public one
 * (never provider text); a validation error names the first broken field.
 */
export function toAnthropicErrorBody(err: AppError, requestId: string): AnthropicErrorBody {
  const detail = err.details?.[0];
  const message =
    detail && (err.code === 'deserialization_error' || err.code === 'validation_failed')
      ? `${err.publicMessage}: ${detail.path}: ${detail.message}`
      : err.publicMessage;
  return { type: 'error', error: { type: anthropicErrorType(err.status), message }, request_id: requestId };
}

/**
 * Anthropic answers a body of the wrong shape (not JSON, a required field
 * missing) with 400 invalid_request_error, where our contract says 422; its
 * SDKs raise BadRequestError for it.
 */
export function anthropicStatus(err: AppError): number {
  return err.status === 422 ? 400 : err.status;
}

/** The error handler of Anthropic's routes: the shared handler (Retry-After, logs) with Anthropic's statuses and body. */
export function anthropicErrorHandler(opts: { logger: Logger }): ErrorRequestHandler {
  return errorHandler({ logger: opts.logger, body: toAnthropicErrorBody, status: anthropicStatus });
}
