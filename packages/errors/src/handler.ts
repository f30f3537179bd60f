import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { AppError, type ErrorDetail } from './app-error';

export type ErrorBody = { error: string; request_id: string; details?: ErrorDetail[] };

type BodyParserError = Error & { type?: string; status?: number; expose?: boolean };

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
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
    return new AppError('deserialization_error', { cause: err });
  }
  return new AppError('internal', { cause: err });
}

type Logger = { error: (obj: object, msg?: string) => void; warn: (obj: object, msg?: string) => void };

/**
 * The one error handler of both services. Our errors keep their status and
 * public message; anything else is logged with its stack and answered with a
 * generic 500, so no internal detail reaches the client.
 */
export function errorHandler(opts: { logger?: Logger } = {}): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const appErr = toAppError(err);
    const log = (req as { log?: Logger }).log ?? opts.logger;
    if (appErr.status >= 500) log?.error({ err }, 'request failed');
    else if (appErr.code === 'internal') log?.error({ err }, 'request failed');
    const body: ErrorBody = { error: appErr.publicMessage, request_id: requestIdOf(res) };
    if (appErr.details && appErr.details.length > 0) body.details = appErr.details;
    if (appErr.headers) for (const [k, v] of Object.entries(appErr.headers)) res.setHeader(k, v);
    res.status(appErr.status).json(body);
  };
}

/** JSON 404 for every route nobody handled. */
export function notFoundHandler(): RequestHandler {
  return (_req, _res, next) => next(new AppError('not_found'));
}

/** Sends an error body outside the Express error path (e.g. from a rate limiter). */
export function sendError(res: Parameters<RequestHandler>[1], err: AppError): void {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  const body: ErrorBody = { error: err.publicMessage, request_id: requestIdOf(res) };
  if (err.details && err.details.length > 0) body.details = err.details;
  res.status(err.status).json(body);
}
