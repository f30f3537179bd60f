import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { AppError, type ErrorDetail } from './app-error';
import type { ErrorCode } from './codes';
import { isDependencyUnavailable } from './unavailable';

/**
 * The JSON error body of both services. `error` is the human string (unchanged
 * since the specs); `code` is the stable machine code (a key of ERROR_CODES) to
 * branch on, since an `error` string may be replaced by a more precise message.
 */
export type ErrorBody = { error: string; code: ErrorCode; request_id: string; details?: ErrorDetail[] };

type BodyParserError = Error & { type?: string; status?: number; statusCode?: number; expose?: boolean };

/** Our code for a 4xx that a library (router, body parser) raised without a type we know. */
const CODE_OF_CLIENT_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'validation_failed',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

function httpStatusOf(e: BodyParserError | undefined): number | undefined {
  const status = e?.status ?? e?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

function requestIdOf(res: { locals: Record<string, unknown> }): string {
  const id = res.locals.requestId;
  return typeof id === 'string' ? id : '';
}

/** Converts a zod error into field details; zod messages never contain input values. */
export function zodDetails(err: ZodError): ErrorDetail[] {
  return err.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}

/** Maps anything thrown into the AppError a client may see. Unknown errors become `internal`. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError)
    return new AppError('deserialization_error', { details: zodDetails(err), cause: err });
  const e = err as BodyParserError;
  switch (e?.type) {
    case 'entity.parse.failed':
      return new AppError('deserialization_error', { cause: err });
    case 'entity.too.large':
      return new AppError('payload_too_large', { cause: err });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', { cause: err });
    case 'request.aborted':
      return new AppError('deserialization_error', { message: 'request aborted', cause: err });
  }
  const status = httpStatusOf(e);
  // The router refuses a path parameter it cannot decode (`%E0%A4%A`, `%ZZ`) with a 400 URIError.
  if (err instanceof URIError && status === 400)
    return new AppError('validation_failed', {
      details: [{ path: '(path)', message: 'malformed percent-encoding' }],
      cause: err,
    });
  if (status !== undefined && status >= 400 && status < 500) {
    if (e.expose) return new AppError('deserialization_error', { cause: err });
    const code = CODE_OF_CLIENT_STATUS[status];
    if (code) return new AppError(code, { cause: err });
  }
  if (isDependencyUnavailable(err)) return new AppError('service_unavailable', { cause: err });
  return new AppError('internal', { cause: err });
}

/**
 * The first message under an error's `cause` chain (a few levels), so a 503's log line
 * names what failed ("Command timed out", a pool's time-out) rather than only the
 * answer's generic text. Driver messages name no secret; the log's redaction runs too.
 */
function causeOf(err: unknown): string | undefined {
  let e = (err as { cause?: unknown } | undefined)?.cause;
  for (let depth = 0; depth < 4 && e !== undefined && e !== null; depth++) {
    const message = (e as Error).message;
    if (typeof message === 'string' && message !== '') return message.slice(0, 200);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

type Logger = { error: (obj: object, msg?: string) => void; warn: (obj: object, msg?: string) => void };

/**
 * The one error handler of both services. Our errors keep their status and
 * public message; anything else is logged with its stack and answered with a
 * generic 500, so no internal detail reaches the client. `body` renders the
 * answer in another wire format (the gateway's OpenAI-compatible `/v1`); the
 * statuses, headers (Retry-After) and logging stay the same.
 */
export function errorHandler(
  opts: {
    logger?: Logger;
    body?: (err: AppError, requestId: string) => object;
    /** The status sent for an error, where a vendor's protocol differs from ours (default: the code's). */
    status?: (err: AppError) => number;
  } = {},
): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) {
      // Already answered in full (e.g. 503 at the shutdown drain deadline while this call was
      // still running): nobody to tell; Express' final handler would print the stack and cut the socket.
      if (res.writableEnded) {
        opts.logger?.warn({ err: { message: (err as Error)?.message } }, 'error after the response was sent');
        return;
      }
      next(err);
      return;
    }
    const appErr = toAppError(err);
    const log = opts.logger;
    // A dependency being down or an upstream timing out is an expected operational state (503, 504),
    // reported by /health/ready and the metrics: one warn line, no stack. Other 5xx are defects.
    if (appErr.code === 'service_unavailable')
      log?.warn({ err: { message: (err as Error)?.message, cause: causeOf(err) } }, 'dependency unavailable');
    else if (appErr.status === 503 || appErr.status === 504)
      log?.warn({ status: appErr.status, err: { message: (err as Error)?.message } }, 'request failed');
    else if (appErr.status >= 500) log?.error({ err }, 'request failed');
    if (appErr.headers) for (const [k, v] of Object.entries(appErr.headers)) res.setHeader(k, v);
    res
      .status(opts.status ? opts.status(appErr) : appErr.status)
      .json(opts.body ? opts.body(appErr, requestIdOf(res)) : errorBodyOf(appErr, res));
  };
}

function errorBodyOf(appErr: AppError, res: Parameters<RequestHandler>[1]): ErrorBody {
  const body: ErrorBody = { error: appErr.publicMessage, code: appErr.code, request_id: requestIdOf(res) };
  if (appErr.details && appErr.details.length > 0) body.details = appErr.details;
  return body;
}

/** JSON 404 for every route nobody handled. */
export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(new AppError('not_found'));
}
