import type { OpenAiErrorBody } from '@platform/contract';
import { AppError, type ErrorCode, errorHandler } from '@platform/errors';
import type { Logger } from '@platform/logging';
import type { ErrorRequestHandler, RequestHandler } from 'express';

/** OpenAI's `code` where it has its own name for the same condition; other codes keep ours. */
const OPENAI_CODES: Partial<Record<ErrorCode, string>> = {
  rate_limited: 'rate_limit_exceeded',
  upstream_content_policy: 'content_policy_violation',
  upstream_context_length: 'context_length_exceeded',
};

/** OpenAI's error `type` for a status: clients branch on the status, some also on this. */
function typeOf(status: number): string {
  if (status === 403) return 'permission_error';
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Errors whose message gains the first broken field, as OpenAI names the field in its text. */
const FIELD_ERRORS: ReadonlySet<ErrorCode> = new Set([
  'deserialization_error',
  'validation_failed',
  // The provider's reason code (a plain identifier) in the message, as OpenAI's own refusals name theirs.
  'upstream_content_policy',
  // Which budget the request can never fit in.
  'request_exceeds_budget',
]);

/**
 * The OpenAI-shaped body of one of our errors. The message is our public
 * message (never provider text); `param` is the first field in `details`,
 * which a validation error also adds to the message.
 */
export function toOpenAiErrorBody(err: AppError): OpenAiErrorBody {
  const detail = err.details?.[0];
  const withField = detail !== undefined && FIELD_ERRORS.has(err.code);
  return {
    error: {
      message: withField ? `${err.publicMessage}: ${detail.path}: ${detail.message}` : err.publicMessage,
      type: typeOf(err.status),
      param: detail?.path ?? null,
      code: OPENAI_CODES[err.code] ?? err.code,
    },
  };
}

/**
 * OpenAI's answer to a model that does not exist (also for a lane the key may
 * not use), followed by the values that do work (`validModels`, from
 * validModelsText), so a tool sending a wrong name learns the right ones.
 */
export function modelNotFound(model: string, validModels?: string): AppError {
  // Quoting the client's own value is safe; it is cut so the message stays short.
  const shown = model.length > 128 ? `${model.slice(0, 128)}...` : model;
  const valid = validModels ? ` Valid models: ${validModels} (GET /v1/models).` : '';
  return new AppError('model_not_found', {
    message: `The model \`${shown}\` does not exist or you do not have access to it.${valid}`,
  });
}

/** A parameter or feature of the request that this gateway (or no target of the lane) serves: 400, naming it. */
export function unsupportedParameter(param: string, message: string): AppError {
  return new AppError('unsupported_parameter', { message, details: [{ path: param, message }] });
}

/**
 * OpenAI answers an unknown top-level field with 400 rather than ignoring it;
 * so do the routes of its formats. `message` says it for the field's name (cut
 * to 64 characters).
 */
export function refuseUnknownFields(
  body: unknown,
  known: ReadonlySet<string>,
  message: (shown: string) => string,
): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  for (const key of Object.keys(body)) {
    if (!known.has(key)) {
      const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
      throw unsupportedParameter(shown, message(shown));
    }
  }
}

/**
 * The error handler of `/v1`: the shared handler (same statuses, Retry-After
 * and logging) with OpenAI's body. The request id is in the `x-request-id`
 * header, set on every response.
 */
export function openAiErrorHandler(opts: { logger: Logger }): ErrorRequestHandler {
  return errorHandler({ logger: opts.logger, body: toOpenAiErrorBody });
}

/** 404 in OpenAI's shape for every `/v1` path nobody handled. */
export function openAiNotFound(): RequestHandler {
  return (req, _res, next) => {
    const path = req.path.length > 200 ? `${req.path.slice(0, 200)}...` : req.path;
    next(new AppError('not_found', { message: `Invalid URL (${req.method} /v1${path})` }));
  };
}
