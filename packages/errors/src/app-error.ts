import { ERROR_CODES, type ErrorCode } from './codes';

/** A field-level problem reported in `details` of a validation error. */
export type ErrorDetail = { path: string; message: string };

export type AppErrorOptions = {
  /**
   * Replaces the code's default `error` string in the body. Only for messages
   * that are safe to show a client (for example Stripe's own invalid-request text).
   */
  message?: string;
  cause?: unknown;
  details?: ErrorDetail[];
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
};

/** An error whose code, status and body the caller is allowed to see. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly publicMessage: string;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const def = ERROR_CODES[code];
    super(options.message ?? def.error, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = def.status;
    this.publicMessage = options.message ?? def.error;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
